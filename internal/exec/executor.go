// Package executor runs the coding agent for one iteration (SPEC §5): it
// builds the command line of a preset (codex, claude) or of a configured
// command, runs it through package proc with the prompt on stdin, the
// repository root as working directory and the RUNNER_* environment, and
// then finds, checks and classifies the agent's final message.
//
// The folder is internal/exec, but the package is named executor so that
// it does not shadow os/exec where both are imported.
package executor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/spend"
	"github.com/runner-cli/runner/internal/state"
)

// Options configure the executor; they mirror the [executor] table of
// config.toml.
type Options struct {
	Preset  string   // "codex", "claude" or "command"
	Bin     string   // program of a preset ("" = "codex" / "claude")
	Args    []string // extra arguments of a preset
	Command []string // argv of preset "command"

	Timeout     time.Duration // 0 = none
	IdleTimeout time.Duration // no output for this long stops the agent; 0 = none
	Grace       time.Duration // SIGTERM to SIGKILL; <= 0 = proc.DefaultGrace
	OutputLimit int64         // executor.log and events.jsonl each keep head and tail within this; <= 0 = unlimited

	Env     map[string]string // extra environment variables
	EnvDrop []string          // inherited variables to remove (CLAUDECODE always is)

	// RateLimitPatterns mark a failed run as rate_limited when one matches
	// an error the agent reported or a line it printed outside its JSON
	// events. Claude's api_error_status 429 needs no pattern.
	RateLimitPatterns []*regexp.Regexp
	// Prices compute a cost from the reported tokens when the agent
	// reports none, and from the usage it reports while it works.
	Prices state.Prices
	// Allowance is what the run may spend (SPEC §24): the usage the agent
	// reports while it works (live.go) is checked against it, and the
	// agent is stopped, as at a timeout, at the first cap reached
	// (ClassCostCap). Nil: no cap.
	Allowance *spend.Allowance
	// Now is the clock reset times are read against; nil = time.Now.
	Now func() time.Time
	// Review makes the run a review (SPEC §17): its final message is a
	// verdict (ParseVerdict, Result.Verdict), not a §5 message.
	Review bool
	// Confined says the run is confined by the runner (SPEC §19): a
	// preset's own sandbox that cannot run inside it is replaced
	// (CodexInRoom).
	Confined bool
	// NestedChildren accepts a final message whose children have
	// children of their own (ParseNestedMessage), as `runner plan` asks
	// for; the loop's agents answer ParseMessage's flat shape.
	NestedChildren bool
}

// OptionsFrom returns the executor's options for the [executor] table
// of config.toml, with its rate limit patterns compiled (patterns).
func OptionsFrom(e config.Executor, patterns []*regexp.Regexp) Options {
	return Options{
		Preset: e.Preset, Bin: e.Bin, Args: e.Args, Command: e.Command,
		Timeout: e.Timeout.Duration, IdleTimeout: e.IdleTimeout.Duration, Grace: e.KillGrace.Duration,
		OutputLimit: int64(e.OutputLimit), Env: e.Env, EnvDrop: e.EnvDrop,
		RateLimitPatterns: patterns, Prices: e.Pricing(),
	}
}

// CompilePatterns compiles the rate limit patterns of the [executor]
// table for OptionsFrom; config validation already refused any that does
// not compile, and such a one is left out.
func CompilePatterns(list []string) []*regexp.Regexp {
	patterns := make([]*regexp.Regexp, 0, len(list))
	for _, p := range list {
		if re, err := regexp.Compile(p); err == nil {
			patterns = append(patterns, re)
		}
	}
	return patterns
}

// Request is one agent run.
type Request struct {
	Root       string // repository root: the agent's working directory
	RunnerDir  string // absolute .runner directory (RUNNER_DIR)
	RunDir     string // absolute runs/NNNNNN directory of this iteration
	Iteration  int
	NodeID     string
	Prompt     []byte // written to the agent's stdin, which is then closed
	PromptFile string // runs/NNNNNN/prompt.md, already written by the caller
	SchemaFile string // .runner/state/output.schema.json, holding OutputSchema
	OnStart    func(pid, pgid int)

	// Confine, when set, runs the agent confined to this room (SPEC §19,
	// package sandbox); it must then be able to write OutputDir.
	Confine *sandbox.Room
	// OutputDir is where the agent writes its final message
	// ({output_file}); "" is RunDir. A message written elsewhere is copied
	// into RunDir once the agent is gone, for the record.
	OutputDir string
	// Env are more variables for the agent ("NAME=value"), before the
	// RUNNER_* ones.
	Env []string

	// Retry is 0 for the first agent run of an iteration. A later run of
	// the same iteration (after a rate limit) appends its output to the
	// executor.log and events.jsonl of the earlier ones, after a line
	// saying so (the earlier runs' part is first cut down to a quarter of
	// OutputLimit when larger, so that each file stays within the limit);
	// everything Run reads back comes from this run only.
	Retry int
}

// Classes of an agent run (Result.Class).
const (
	ClassOK          = "ok"
	ClassAgentError  = "agent_error"
	ClassTimeout     = "timeout"
	ClassIdle        = "idle"
	ClassInterrupted = "interrupted" // ctx was canceled (SIGINT/SIGTERM to the runner)
	// ClassCostCap: the runner stopped the agent at a spend cap of its
	// Allowance (Result.CostCap says which).
	ClassCostCap = "cost_cap"
)

// Result is the outcome of one agent run.
type Result struct {
	Argv     []string
	ExitCode int // -1 when killed by a signal
	Signal   string
	Duration time.Duration
	Class    string // one of the Class constants
	Error    string // why Class is not ok, with the last lines of executor.log; "" when ok

	// Message is set whenever a valid final message was found, whatever
	// the Class; MessageSource says where (Source constants). For a
	// review (Options.Review) it is Verdict instead.
	Message       *Message
	Verdict       *Verdict
	MessageSource string
	MessageError  string // why no valid message was found

	LogTail  string // the last lines of executor.log (codex, claude: its non-JSON lines), for the next attempt's history
	LogBytes int64  // output received (stdout and stderr)
	CutBytes int64  // output left out of executor.log and events.jsonl by OutputLimit

	// Recovered is set on a Result rebuilt by Recover from the files of a
	// run whose runner died: ExitCode is then -1 with no Signal, and
	// Duration is 0 (both unknown).
	Recovered bool

	// Evidence is what a class other than ok rests on: the Codex error
	// event, the Claude result subtype and text, or the matching line the
	// agent printed, prefixed with where it came from.
	Evidence string
	// AgentFailed is set when the agent itself failed: a non-zero exit or
	// a signal, an error it reported (Claude is_error, a Codex turn.failed
	// or error event), a timeout or idle stop. A run that finished but
	// gave no valid final message did not fail in this sense.
	AgentFailed bool
	// ResetAt is when a usage limit resets, when the agent said so
	// (Class rate_limited only).
	ResetAt *time.Time
	// Usage is what the agent reported it used: what it reported at its
	// end, else what it reported while it worked; nil when it reported
	// nothing.
	Usage *state.Usage
	// CostCap is the spend cap the runner stopped the agent at (Class
	// cost_cap), with the figures.
	CostCap *state.CapHit
	// PermissionDenials are the tool calls the agent was refused.
	PermissionDenials []state.PermissionDenial
}

// Files of an iteration written by Run. The codex and claude presets
// split their output: stdout lines that start with "{" (their JSON events)
// go to events.jsonl, everything else to executor.log; preset command
// writes all of it to executor.log. Each file keeps its head and tail
// within Options.OutputLimit.
const (
	OutputFileName = "last_message.txt" // {output_file}, written by the agent
	EventsFileName = "events.jsonl"     // the JSON event lines of the codex and claude presets' stdout
	LogFileName    = "executor.log"     // stderr and the rest of stdout
	// ExitFileName is the agent's exit status (proc.ExitRecord), written
	// as soon as it is reaped, for Recover.
	ExitFileName = "agent_exit.json"
)

const (
	stdoutTailSize = 1 << 20 // end of stdout kept in memory to find the message
	outputFileMax  = 4 << 20 // larger output files are refused
	logTailLines   = 20
	errorTailLines = 10
	clueLines      = 50 // lines printed outside the events searched for evidence
)

// OutputFile returns the {output_file} of an iteration.
func OutputFile(runDir string) string {
	return filepath.Join(runDir, OutputFileName)
}

// Run runs the agent once and classifies the run. A bare program name is
// looked up in the runner's $PATH (not one set in Options.Env); a relative
// path is taken from Request.Root. The error is only for
// runner-side failures: a bad preset, a missing program (with the install
// hint), a run directory that cannot be written, a program that cannot be
// started. Everything the agent does wrong is in the Result. A canceled
// ctx stops the agent's process group (SIGTERM, grace, SIGKILL) and gives
// Class "interrupted"; the partial executor.log is kept.
func Run(ctx context.Context, o Options, r Request) (*Result, error) {
	o.Confined = o.Confined || r.Confine != nil
	out := OutputFile(r.RunDir)
	if r.OutputDir != "" {
		out = OutputFile(r.OutputDir)
	}
	ph := Placeholders{
		PromptFile: r.PromptFile, OutputFile: out, SchemaFile: r.SchemaFile,
		Iteration: r.Iteration, Node: r.NodeID,
	}
	argv, err := BuildArgv(o, ph)
	if err != nil {
		return nil, &StartError{Err: err}
	}
	if err := checkExecutable(o.Preset, argv[0], r.Root); err != nil {
		return nil, &StartError{Err: err}
	}
	// A stale output file from an earlier run of this directory must never
	// be read as this run's message.
	if err := fsutil.Remove(out); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove stale output file: %w", err)
	}
	exitFile := filepath.Join(r.RunDir, ExitFileName)
	if err := fsutil.Remove(exitFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove stale exit record: %w", err)
	}

	o, r, argv, homeDir, removeState, err := prepareCLI(o, r, argv)
	if err != nil {
		return nil, err
	}
	defer removeState()

	output, err := openOutput(o, r)
	if err != nil {
		return nil, fmt.Errorf("create the agent's output files: %w", err)
	}
	// A cap reached while the agent works stops it as a timeout does.
	runCtx, stopAtCap := context.WithCancelCause(ctx)
	defer stopAtCap(nil)
	live := newLiveUsage(o, func(*state.CapHit) { stopAtCap(errCostCap) })
	if o.Preset == PresetClaude {
		output.stream.live = live
	}
	endWatch := func() {}
	if o.Preset == PresetCodex && homeDir != "" {
		endWatch = watchSession(homeDir, live)
	}
	pr := proc.Run(runCtx, proc.Spec{
		Argv:        argv,
		Dir:         r.Root,
		Env:         buildEnv(os.Environ(), o, r, ph),
		Stdin:       r.Prompt,
		Stdout:      output.stdout,
		Stderr:      output.stderr,
		Timeout:     o.Timeout,
		IdleTimeout: o.IdleTimeout,
		Grace:       o.Grace,
		OnStart:     r.OnStart,
		ExitFile:    exitFile,
		Confine:     withHome(r.Confine, homeDir),
	})
	endWatch()
	cut, ioErr := output.close()
	if pr.StartErr != nil {
		return nil, &StartError{Err: fmt.Errorf("run executor: %w", pr.StartErr)}
	}
	res := &Result{
		Argv:     argv,
		ExitCode: pr.ExitCode,
		Signal:   pr.Signal,
		Duration: pr.Duration,
		LogBytes: pr.LogBytes,
		CutBytes: cut,
	}
	if ioErr = errors.Join(pr.OutputErr, ioErr); ioErr != nil {
		return res, fmt.Errorf("record executor output in %s: %w", r.RunDir, ioErr)
	}
	outData, readErr := fsutil.ReadLimited(out, outputFileMax, true)
	if out != OutputFile(r.RunDir) && readErr == nil {
		if err := fsutil.ReplaceFile(OutputFile(r.RunDir), outData, 0o644, fsutil.NotSynced); err != nil {
			return res, fmt.Errorf("keep the agent's message in %s: %w", r.RunDir, err)
		}
	}
	logEnd := logWindow(filepath.Join(r.RunDir, LogFileName), output.log.Start())
	conclude(o, pr, res, outData, readErr, output.view(), logEnd)
	concludeSpend(res, live, pr.Canceled && ctx.Err() == nil)
	return res, nil
}

// logTailOf returns Result.LogTail from the end of a run's part of
// executor.log: its last lines; for the codex and claude presets, whose
// stdout is JSON events (read into Error and Evidence), the last lines
// that are not JSON.
func logTailOf(preset, logEnd string) string {
	if splitsStdout(preset) {
		return strings.Join(outsideLines(logEnd, preset, logTailLines), "\n")
	}
	return lastLinesOf(logEnd, logTailLines)
}

// conclude fills in what a run's output says (LogTail, the message, the
// class and its evidence, the usage, the refused tool calls) from the way
// it ended, the content of the output file (or why it could not be read),
// stdout (read by an event stream) and the end of this run's part of
// executor.log. It returns the message lookup and the Codex events.
func conclude(o Options, pr proc.Result, res *Result, outData []byte, readErr error, stdout stdoutView, logEnd string) (found, codexStream) {
	res.LogTail = logTailOf(o.Preset, logEnd)
	parse := parseTaskMessage
	switch {
	case o.Review:
		parse = parseVerdict
	case o.NestedChildren:
		parse = parseNestedMessage
	}
	f := lookupMessage(outData, stdout, parse)
	if readErr != nil && !errors.Is(readErr, fs.ErrNotExist) {
		// The agent wrote an output file that cannot be used (too large,
		// not UTF-8): it is still the first source, so it decides.
		f.answer, f.source, f.err, f.none = nil, SourceOutputFile, fmt.Errorf("output file: %w", readErr), false
	}
	res.Message, res.Verdict, res.MessageSource = f.message(), f.verdict(), f.source
	if f.err != nil {
		res.Message, res.Verdict = nil, nil
		res.MessageError = f.err.Error()
	}
	cx := stdout.stream.codex.result()
	v := classify(o, pr, f, cx, outsideLines(logEnd, o.Preset, clueLines))
	res.Class, res.Error, res.Evidence, res.AgentFailed, res.ResetAt = v.class, v.reason, v.evidence, v.failed, v.resetAt
	if f.none && (v.failed || v.class == ClassInterrupted) {
		// Nothing could be read as a message because the run failed: say
		// so rather than where no message was.
		res.MessageError = "no final message: " + v.reason
		if v.resetAt != nil {
			res.MessageError += "; the limit resets at " + v.resetAt.Format(time.RFC3339)
		}
	}
	res.Usage = usageOf(f.claude, cx, o.Prices)
	res.PermissionDenials = denialsOf(f.claude, cx)
	if res.Class != ClassOK && res.Class != ClassInterrupted {
		if ev := lastLinesOf(res.LogTail, errorTailLines); ev != "" {
			res.Error += "; last lines of executor.log:\n" + ev
		}
	}
	return f, cx
}

// buildEnv returns the agent's environment: the runner's, without
// CLAUDECODE, the runner's secrets (sandbox.SecretVars), the EnvDrop names
// and anything set below; then Options.Env (sorted); then the RUNNER_*
// variables, which always win.
func buildEnv(base []string, o Options, r Request, ph Placeholders) []string {
	runnerVars := []string{
		"RUNNER_PROMPT_FILE=" + ph.PromptFile,
		"RUNNER_OUTPUT_FILE=" + ph.OutputFile,
		"RUNNER_SCHEMA_FILE=" + ph.SchemaFile,
		"RUNNER_ITERATION=" + strconv.Itoa(ph.Iteration),
		"RUNNER_NODE_ID=" + ph.Node,
		"RUNNER_DIR=" + r.RunnerDir,
	}
	drop := map[string]bool{"CLAUDECODE": true}
	for _, k := range sandbox.SecretVars {
		drop[k] = true
	}
	for _, k := range o.EnvDrop {
		drop[k] = true
	}
	keys := make([]string, 0, len(o.Env))
	for k := range o.Env {
		keys = append(keys, k)
		drop[k] = true
	}
	sort.Strings(keys)
	for _, kv := range append(slices.Clip(r.Env), runnerVars...) {
		if i := strings.IndexByte(kv, '='); i > 0 {
			drop[kv[:i]] = true
		}
	}
	env := make([]string, 0, len(base)+len(keys)+len(runnerVars))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	for _, k := range keys {
		env = append(env, k+"="+o.Env[k])
	}
	env = append(env, r.Env...)
	return append(env, runnerVars...)
}

// logWindow returns the end of a log file from offset from on, at most
// 16 KiB of it, starting at a line boundary ("" if unreadable).
func logWindow(path string, from int64) string {
	f, err := openRegular(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const window = 16 << 10
	st, err := f.Stat()
	if err != nil || st.Size() <= from {
		return ""
	}
	off := max(from, st.Size()-window)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	if off > from {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:] // drop the partial first line
		}
	}
	return strings.ToValidUTF8(string(buf), "\uFFFD")
}

// lastLines returns the last n lines of the end of a file ("" if unreadable).
func lastLines(path string, n int) string {
	return lastLinesOf(logWindow(path, 0), n)
}

// lastLinesOf returns the last n lines of s, ignoring trailing newlines.
func lastLinesOf(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
