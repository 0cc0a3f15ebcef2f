// Package fakeagent is a small scripted stand-in for a coding agent, used by
// the end-to-end tests (testscript registers it as the `fakeagent`
// command; `runner demo` has its own scripted agent, internal/demo). It
// behaves like an agent run by the runner: it reads the prompt on stdin,
// changes files in its working directory, prints, and delivers a final
// message; what it does is read from a JSON script.
//
// The script's path is the FAKEAGENT_SCRIPT environment variable or, when
// that is unset, the first argument. The fake agent counts its own
// invocations per node (RUNNER_NODE_ID) in a state file, FAKEAGENT_STATE/
// fakeagent.state.json when FAKEAGENT_STATE names a directory, else the
// script path plus ".state". The first step whose node and attempt match
// runs; "default" runs when none does. An invocation that matches nothing
// exits 125, as does a script that cannot be read (the reason goes to
// stderr).
//
// Script format (unknown fields are refused):
//
//	{
//	  "steps": [
//	    {"node": "parse", "attempt": 1,
//	     "save_prompt": "prompt-seen.md",
//	     "write": [{"path": "parse.go", "content": "package calc\n"}],
//	     "stdout": "writing the parser\n",
//	     "message": {"status": "retry", "summary": "half done"}},
//	    {"node": "parse",
//	     "write": [{"path": "notes.txt", "content": "again\n", "append": true}],
//	     "message": {"status": "done", "summary": "parser written"},
//	     "deliver": "stdout"}
//	  ],
//	  "default": {"message": {"status": "blocked", "summary": "nothing scripted"}}
//	}
//
// Step fields, carried out in this order:
//
//	node, attempt   match: RUNNER_NODE_ID ("" = any) and the 1-based attempt
//	                number for that node (0 = any)
//	ignore_term     ignore SIGTERM (only SIGKILL stops it)
//	stdin           "first" (default: read all of stdin before anything
//	                else), "last" (read it after printing), "ignore"
//	save_prompt     file receiving the stdin that was read ($VARS expanded:
//	                "$FAKEAGENT_STATE/prompt.md" is outside a read-only room)
//	save_args       file receiving the arguments, one per line ($VARS
//	                expanded)
//	env             names of environment variables printed to stdout as
//	                NAME=value, or "NAME unset"
//	delete          files to remove (missing ones are fine)
//	symlink         [{path, target}]: replace path (whatever it is, a folder
//	                with its content too) with a symbolic link to target
//	hardlink        [{path, target}]: replace path with a hard link to the
//	                file target (relative to the working directory)
//	mkfifo          paths to replace with named pipes
//	write           [{path, content, append}]: files to write or append to
//	                (parent directories are created)
//	grandchild      {"sleep": "60s", "pid_file": "gc.pid"}: start `sleep`
//	                sharing stdout and stderr, in the same process group,
//	                write its pid, and do not wait for it
//	shell           commands run in turn with sh -c (their output goes to
//	                stderr); a failing one fails the fake (exit 125)
//	stdout, stderr  text to print
//	filler          number of bytes of filler lines to print on stdout
//	json_filler     number of bytes of JSON lines to print on stdout
//	                ({"filler": ...} objects; the codex and claude modes
//	                print events of their own kind, see below)
//	wait_file       wait (up to two minutes) until this file exists,
//	                after printing stdout and stderr
//	sleep           duration (Go syntax) to sleep
//	message         the final message, any JSON value (invalid ones too)
//	deliver         how the message is delivered: "output_file" (default;
//	                the file named by RUNNER_OUTPUT_FILE), "stdout" (with
//	                text around it), "claude" (Claude stream-json events
//	                ending with a result event whose result text holds the
//	                message in a code block), "garbage" (non-JSON text in
//	                the output file), "none"
//	is_error        with "claude": the result event says is_error: true
//	text            with "claude": the result text to use instead
//	exit            exit code
//
// Paths are relative to the working directory.
//
// # Playing codex and claude
//
// With FAKEAGENT_MODE=codex or claude (or MainAs), the fake takes the
// command line of the real CLI (`codex exec [flags] -`, `claude -p
// [flags]`) and refuses flags the real one does not know, reads the script
// from FAKEAGENT_SCRIPT, and prints what the real one prints: for codex the
// --json event stream (thread.started, turn.started, item.started and
// item.completed for command_execution, file_change and agent_message
// items, turn.completed with usage, or error and turn.failed) and the -o
// file; for claude the stream-json events (system init, assistant and user
// tool events, then a result event with subtype, is_error, result,
// total_cost_usd, usage, permission_denials, api_error_status), or the
// json envelope, or text. json_filler prints codex reasoning items or
// claude assistant text events before the commands. These step fields
// apply:
//
//	write           files written and reported (codex file_change, claude
//	                Write tool); claude refuses them without an edit
//	                permission, codex with --sandbox read-only
//	commands        [{command, output, exit_code, declined}]: commands
//	                reported as run (codex command_execution, claude Bash
//	                tool, refused without a Bash permission); nothing runs,
//	                but one with run: true runs as the real CLI runs it
//	                (claudeShell, codexShell), its output the tool's result
//	message         the final message: codex's last agent_message and -o
//	                file, claude's result text (in a code block)
//	turns           [{pause, write, usage}]: model responses before the
//	                final message, each reporting its usage as the real CLI
//	                does while it works: claude assistant events with
//	                message.usage, codex token_count events (running
//	                totals) in $CODEX_HOME/sessions/…/rollout-*.jsonl (not
//	                with --ephemeral); each waits pause first, then writes
//	                its files (see turns.go)
//	usage           {input_tokens, cached_input_tokens, output_tokens,
//	                cost_usd}: codex turn.completed usage; claude usage and
//	                total_cost_usd (added to the turns')
//	error           the run fails with this text: codex prints an error
//	                and a turn.failed event, leaves the -o file empty and
//	                exits 1; claude ends with is_error true and this result
//	                text, exit code from exit (0 by default, as after an API
//	                error)
//	no_events       codex prints no events at all (the error goes to stderr)
//	subtype         claude result subtype (error_max_turns, ...): is_error
//	                true, the text in errors instead of result
//	api_error_status claude's api_error_status
//	hang            "reconnect": codex with its server unreachable: error
//	                events "Reconnecting... waiting for network" (and log
//	                lines on stderr) with growing delays, never exiting;
//	                "silent": print the start events, then nothing, forever
//	reset_in        a duration: {reset_at} in error, stderr and text becomes
//	                the time now + reset_in as the CLI prints it ("7:33 AM",
//	                "7:33am")
//	stdout, stderr, sleep, exit, save_prompt, save_args, env, ignore_term
//	                as above
package fakeagent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/strictjson"
)

// Script is the fake agent's behaviour.
type Script struct {
	Steps   []Step `json:"steps"`
	Default *Step  `json:"default,omitempty"`
}

// Step is one scripted behaviour; see the package documentation.
type Step struct {
	Node    string `json:"node,omitempty"`
	Attempt int    `json:"attempt,omitempty"`

	IgnoreTerm bool        `json:"ignore_term,omitempty"`
	Stdin      string      `json:"stdin,omitempty"`
	SavePrompt string      `json:"save_prompt,omitempty"`
	SaveArgs   string      `json:"save_args,omitempty"`
	Env        []string    `json:"env,omitempty"`
	Delete     []string    `json:"delete,omitempty"`
	Symlink    []Link      `json:"symlink,omitempty"`
	Hardlink   []Link      `json:"hardlink,omitempty"`
	Mkfifo     []string    `json:"mkfifo,omitempty"`
	Write      []File      `json:"write,omitempty"`
	Grandchild *Grandchild `json:"grandchild,omitempty"`
	Shell      []string    `json:"shell,omitempty"`
	WaitFile   string      `json:"wait_file,omitempty"`
	Stdout     string      `json:"stdout,omitempty"`
	Stderr     string      `json:"stderr,omitempty"`
	Filler     int64       `json:"filler,omitempty"`
	JSONFiller int64       `json:"json_filler,omitempty"`
	Sleep      string      `json:"sleep,omitempty"`

	Message json.RawMessage `json:"message,omitempty"`
	Deliver string          `json:"deliver,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	Text    string          `json:"text,omitempty"`

	Exit int `json:"exit,omitempty"`

	// Used when the fake plays the real codex or claude CLI (see cli.go).
	Commands       []Command `json:"commands,omitempty"`
	Turns          []Turn    `json:"turns,omitempty"`
	Usage          *Usage    `json:"usage,omitempty"`
	Error          string    `json:"error,omitempty"`
	NoEvents       bool      `json:"no_events,omitempty"`
	Subtype        string    `json:"subtype,omitempty"`
	APIErrorStatus int       `json:"api_error_status,omitempty"`
	Hang           string    `json:"hang,omitempty"`
	ResetIn        string    `json:"reset_in,omitempty"`
}

// Command is a shell command a fake codex or claude reports having run
// (nothing is run, unless Run: see claudeShell).
type Command struct {
	Command  string `json:"command"`
	Output   string `json:"output,omitempty"`
	ExitCode int    `json:"exit_code,omitempty"`
	Declined bool   `json:"declined,omitempty"`
	Run      bool   `json:"run,omitempty"`
}

// Usage is the token usage a fake codex or claude reports; CostUSD only
// for claude (total_cost_usd).
type Usage struct {
	InputTokens       int64    `json:"input_tokens"`
	CachedInputTokens int64    `json:"cached_input_tokens,omitempty"`
	OutputTokens      int64    `json:"output_tokens"`
	CostUSD           *float64 `json:"cost_usd,omitempty"`
}

// File is a file a step writes.
type File struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Append  bool   `json:"append,omitempty"`
}

// Link is a link a step makes, as a hostile agent would: path is
// replaced by a link to target.
type Link struct {
	Path   string `json:"path"`
	Target string `json:"target"`
}

// Grandchild is a `sleep` process the step leaves running.
type Grandchild struct {
	Sleep   string `json:"sleep"`
	PIDFile string `json:"pid_file,omitempty"`
}

// exitUsage is the exit code for a script that cannot be used.
const exitUsage = 125

// Main runs the fake agent with the process's arguments, environment and
// standard streams, and returns its exit code. FAKEAGENT_MODE=codex or
// claude makes it play that CLI (see MainAs).
func Main() int {
	return MainAs(os.Getenv("FAKEAGENT_MODE"))
}

// MainAs runs the fake agent as mode: "" (the plain scripted agent),
// "codex" or "claude" (the real CLI's command line, output formats, exit
// codes and quirks; the script is FAKEAGENT_SCRIPT).
func MainAs(mode string) int {
	var code int
	var err error
	switch mode {
	case "":
		code, err = run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	case ModeCodex, ModeClaude:
		code, err = runCLI(mode, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	default:
		err = fmt.Errorf("FAKEAGENT_MODE %q: want codex, claude or nothing", mode)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakeagent: %v\n", err)
		return exitUsage
	}
	return code
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	path := os.Getenv("FAKEAGENT_SCRIPT")
	if path == "" && len(args) > 0 {
		path = args[0]
	}
	if path == "" {
		return 0, errors.New("no script: set FAKEAGENT_SCRIPT or pass the script path as the first argument")
	}
	st, err := nextStep(path)
	if err != nil {
		return 0, err
	}
	return st.run(args, stdin, stdout, stderr)
}

// nextStep loads the script at path, counts this invocation for the node
// in RUNNER_NODE_ID and returns the step that matches it.
func nextStep(path string) (*Step, error) {
	sc, err := Load(path)
	if err != nil {
		return nil, err
	}
	node := os.Getenv("RUNNER_NODE_ID")
	attempt, err := countAttempt(statePath(path), node)
	if err != nil {
		return nil, err
	}
	st := sc.Match(node, attempt)
	if st == nil {
		return nil, fmt.Errorf("script %s: no step for node %q attempt %d and no default", path, node, attempt)
	}
	return st, nil
}

// Load reads and checks a script.
func Load(path string) (*Script, error) {
	data, err := fsutil.ReadLimited(path, 16<<20, true)
	if err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	var sc Script
	if err := strictjson.Decode(data, &sc, 0); err != nil {
		return nil, fmt.Errorf("parse script %s: %w", path, err)
	}
	steps := append([]Step(nil), sc.Steps...)
	if sc.Default != nil {
		steps = append(steps, *sc.Default)
	}
	for i, st := range steps {
		if err := st.check(); err != nil {
			return nil, fmt.Errorf("script %s: step %d: %w", path, i, err)
		}
	}
	return &sc, nil
}

// Match returns the first step for node and attempt, else the default
// (nil if there is none).
func (sc *Script) Match(node string, attempt int) *Step {
	for i := range sc.Steps {
		st := &sc.Steps[i]
		if (st.Node == "" || st.Node == node) && (st.Attempt == 0 || st.Attempt == attempt) {
			return st
		}
	}
	return sc.Default
}

func (st *Step) check() error {
	switch st.Stdin {
	case "", "first", "last", "ignore":
	default:
		return fmt.Errorf("stdin %q: want first, last or ignore", st.Stdin)
	}
	switch st.Deliver {
	case "", "output_file", "stdout", "claude", "garbage", "none":
	default:
		return fmt.Errorf("deliver %q: want output_file, stdout, claude, garbage or none", st.Deliver)
	}
	if st.Sleep != "" {
		if _, err := time.ParseDuration(st.Sleep); err != nil {
			return fmt.Errorf("sleep: %w", err)
		}
	}
	if st.Grandchild != nil {
		if _, err := time.ParseDuration(st.Grandchild.Sleep); err != nil {
			return fmt.Errorf("grandchild sleep: %w", err)
		}
	}
	if len(st.Message) > 0 && !json.Valid(st.Message) {
		return errors.New("message is not valid JSON")
	}
	switch st.Hang {
	case "", "reconnect", "silent":
	default:
		return fmt.Errorf("hang %q: want reconnect or silent", st.Hang)
	}
	if st.ResetIn != "" {
		if _, err := time.ParseDuration(st.ResetIn); err != nil {
			return fmt.Errorf("reset_in: %w", err)
		}
	}
	return st.checkTurns()
}

// statePath is where invocations are counted.
func statePath(script string) string {
	if dir := os.Getenv("FAKEAGENT_STATE"); dir != "" {
		return filepath.Join(dir, "fakeagent.state.json")
	}
	return script + ".state"
}

// countAttempt records one more invocation for node and returns its number.
func countAttempt(path, node string) (int, error) {
	// Fakes running at once (parallel slots) count one at a time.
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return 0, fmt.Errorf("lock state: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return 0, fmt.Errorf("lock state: %w", err)
	}
	counts := map[string]int{}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &counts); err != nil {
			return 0, fmt.Errorf("read state %s: %w", path, err)
		}
	case !errors.Is(err, os.ErrNotExist):
		return 0, fmt.Errorf("read state: %w", err)
	}
	counts[node]++
	out, _ := json.Marshal(counts)
	if err := fsutil.WriteFileAtomic(path, out, 0o644); err != nil {
		return 0, fmt.Errorf("write state: %w", err)
	}
	return counts[node], nil
}

func (st *Step) run(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if st.IgnoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	var prompt []byte
	readStdin := func() error {
		var err error
		prompt, err = io.ReadAll(stdin)
		if err != nil {
			return fmt.Errorf("read stdin: %w", err)
		}
		if st.SavePrompt != "" {
			return writeFile(os.ExpandEnv(st.SavePrompt), prompt, false)
		}
		return nil
	}
	if st.Stdin == "" || st.Stdin == "first" {
		if err := readStdin(); err != nil {
			return 0, err
		}
	}
	if st.SaveArgs != "" {
		var b strings.Builder
		for _, a := range args {
			b.WriteString(a + "\n")
		}
		if err := writeFile(os.ExpandEnv(st.SaveArgs), []byte(b.String()), false); err != nil {
			return 0, err
		}
	}
	for _, name := range st.Env {
		if v, ok := os.LookupEnv(name); ok {
			fmt.Fprintf(stdout, "%s=%s\n", name, v)
		} else {
			fmt.Fprintf(stdout, "%s unset\n", name)
		}
	}
	for _, p := range st.Delete {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, err
		}
	}
	if err := st.makeLinks(); err != nil {
		return 0, err
	}
	for _, f := range st.Write {
		if err := writeFile(f.Path, []byte(f.Content), f.Append); err != nil {
			return 0, err
		}
	}
	if g := st.Grandchild; g != nil {
		if err := startGrandchild(g); err != nil {
			return 0, err
		}
	}
	for _, line := range st.Shell {
		cmd := exec.Command("sh", "-c", line)
		cmd.Stdout, cmd.Stderr = stderr, stderr
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("shell %q: %w", line, err)
		}
	}
	io.WriteString(stdout, st.Stdout)
	io.WriteString(stderr, st.Stderr)
	if st.WaitFile != "" {
		if err := waitFile(st.WaitFile, 2*time.Minute); err != nil {
			return 0, err
		}
	}
	if err := filler(stdout, st.Filler); err != nil {
		return 0, err
	}
	if err := jsonFiller(stdout, st.JSONFiller, plainFillerLine); err != nil {
		return 0, err
	}
	if st.Stdin == "last" {
		if err := readStdin(); err != nil {
			return 0, err
		}
	}
	if st.Sleep != "" {
		d, _ := time.ParseDuration(st.Sleep)
		time.Sleep(d)
	}
	if err := st.deliver(stdout); err != nil {
		return 0, err
	}
	return st.Exit, nil
}

// waitFile waits until path exists, up to limit.
func waitFile(path string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("wait_file: %s did not appear within %s", path, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func writeFile(path string, data []byte, appendMode bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendMode {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// makeLinks replaces the step's symlink, hardlink and mkfifo paths.
func (st *Step) makeLinks() error {
	for _, l := range st.Symlink {
		if err := os.RemoveAll(l.Path); err != nil {
			return err
		}
		if err := os.Symlink(l.Target, l.Path); err != nil {
			return err
		}
	}
	for _, l := range st.Hardlink {
		if err := os.RemoveAll(l.Path); err != nil {
			return err
		}
		if err := os.Link(l.Target, l.Path); err != nil {
			return err
		}
	}
	for _, p := range st.Mkfifo {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			return fmt.Errorf("mkfifo %s: %w", p, err)
		}
	}
	return nil
}

func startGrandchild(g *Grandchild) error {
	d, _ := time.ParseDuration(g.Sleep)
	cmd := exec.Command("sleep", strconv.FormatFloat(d.Seconds(), 'f', -1, 64))
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start grandchild: %w", err)
	}
	if g.PIDFile != "" {
		return writeFile(g.PIDFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), false)
	}
	return nil
}

// filler prints n bytes of 64-byte lines.
func filler(w io.Writer, n int64) error {
	line := []byte(strings.Repeat("f", 63) + "\n")
	chunk := make([]byte, 0, 64*1024)
	for len(chunk)+len(line) <= cap(chunk) {
		chunk = append(chunk, line...)
	}
	for n > 0 {
		c := chunk[:min(int64(len(chunk)), n)]
		if _, err := w.Write(c); err != nil {
			return fmt.Errorf("print filler: %w", err)
		}
		n -= int64(len(c))
	}
	return nil
}

// Lines of JSON filler: each takes the line number and the text to carry.
var (
	plainFillerLine = func(n int, text string) any {
		return map[string]any{"filler": n, "text": text}
	}
	codexFillerLine = func(n int, text string) any {
		return map[string]any{"type": "item.completed", "item": map[string]any{
			"id": fmt.Sprintf("item_f%d", n), "type": "reasoning", "text": text}}
	}
	claudeFillerLine = func(n int, text string) any {
		return map[string]any{"type": "assistant", "session_id": "fake", "message": map[string]any{
			"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}}}
	}
)

// jsonFiller prints about n bytes of JSON lines made by line, each about
// 1 KiB.
func jsonFiller(w io.Writer, n int64, line func(int, string) any) error {
	text := strings.Repeat("thinking ", 110)
	buf := make([]byte, 0, 64<<10)
	for i := 0; n > 0; i++ {
		data, err := marshalEvent(line(i, text))
		if err != nil {
			return err
		}
		buf = append(append(buf, data...), '\n')
		n -= int64(len(data)) + 1
		if len(buf) > 60<<10 || n <= 0 {
			if _, err := w.Write(buf); err != nil {
				return fmt.Errorf("print JSON filler: %w", err)
			}
			buf = buf[:0]
		}
	}
	return nil
}

func (st *Step) deliver(stdout io.Writer) error {
	mode := st.Deliver
	if mode == "" {
		mode = "output_file"
	}
	if mode == "none" || (len(st.Message) == 0 && mode != "garbage" && mode != "claude") {
		return nil
	}
	switch mode {
	case "output_file", "garbage":
		out := os.Getenv("RUNNER_OUTPUT_FILE")
		if out == "" {
			return errors.New("deliver to the output file: RUNNER_OUTPUT_FILE is not set")
		}
		data := append([]byte(st.Message), '\n')
		if mode == "garbage" {
			data = []byte("this is not a final message {\n")
		}
		return writeFile(out, data, false)
	case "stdout":
		_, err := fmt.Fprintf(stdout, "Here is my final message:\n%s\nThat is all.\n", st.Message)
		return err
	case "claude":
		text := st.Text
		if text == "" && len(st.Message) > 0 {
			text = "All done.\n```json\n" + string(st.Message) + "\n```"
		}
		subtype := "success"
		if st.IsError {
			subtype = "error_during_execution"
		}
		events := []any{
			map[string]any{"type": "system", "subtype": "init", "session_id": "fake", "model": "fake"},
			map[string]any{"type": "assistant", "session_id": "fake", "message": map[string]any{
				"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}}},
			map[string]any{"type": "result", "subtype": subtype, "is_error": st.IsError,
				"duration_ms": 1, "num_turns": 1, "result": text, "session_id": "fake",
				"total_cost_usd": 0.001, "usage": map[string]any{"input_tokens": 1, "output_tokens": 1}},
		}
		for _, e := range events {
			line, _ := marshalEvent(e)
			if _, err := fmt.Fprintf(stdout, "%s\n", line); err != nil {
				return err
			}
		}
	}
	return nil
}
