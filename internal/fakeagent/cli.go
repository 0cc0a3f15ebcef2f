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
)

// Modes of the fake agent that play a real CLI.
const (
	ModeCodex  = "codex"
	ModeClaude = "claude"
)

// codexValueFlags and codexBoolFlags are the options of `codex exec`
// (codex-cli 0.169.0).
var (
	codexValueFlags = set("-c", "--config", "--enable", "--disable", "-i", "--image", "-m", "--model",
		"--local-provider", "-p", "--profile", "-s", "--sandbox", "-C", "--cd", "--add-dir",
		"--thread-source", "--cyber-access-program", "--output-schema", "--color",
		"-o", "--output-last-message")
	codexBoolFlags = set("--oss", "--strict-config", "--approve-for-me",
		"--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust", "--worktree",
		"--skip-git-repo-check", "--trust", "--ephemeral", "--ignore-user-config", "--ignore-rules",
		"--json", "-h", "--help")
)

// claudeValueFlags, claudeListFlags and claudeBoolFlags are the options of
// `claude` (Claude Code 2.1) that -p runs use; list flags take every
// following argument up to the next option.
var (
	claudeValueFlags = set("--output-format", "--input-format", "--model", "--permission-mode",
		"--append-system-prompt", "--system-prompt", "--max-turns", "--max-budget-usd", "--json-schema",
		"--fallback-model", "--settings", "--session-id", "--agents", "--agent", "--effort", "-n", "--name",
		"--setting-sources", "--debug-file", "--plugin-dir", "-r", "--resume")
	claudeListFlags = set("--allowedTools", "--allowed-tools", "--disallowedTools", "--disallowed-tools",
		"--add-dir", "--mcp-config", "--tools", "--betas")
	claudeBoolFlags = set("-p", "--print", "--verbose", "--dangerously-skip-permissions",
		"--allow-dangerously-skip-permissions", "--include-partial-messages", "--no-session-persistence",
		"--strict-mcp-config", "--bare", "-c", "--continue", "--fork-session", "--replay-user-messages",
		"--disable-slash-commands", "--ide", "--safe-mode", "-d", "--debug", "-h", "--help")
	claudePermissionModes = set("acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// cliArgs is a parsed command line: option values (the last one wins, list
// options accumulate) and positional arguments.
type cliArgs struct {
	values map[string][]string
	pos    []string
}

func (a cliArgs) has(names ...string) bool {
	for _, n := range names {
		if _, ok := a.values[n]; ok {
			return true
		}
	}
	return false
}

func (a cliArgs) value(names ...string) string {
	v := ""
	for _, n := range names {
		if vs := a.values[n]; len(vs) > 0 {
			v = vs[len(vs)-1]
		}
	}
	return v
}

func (a cliArgs) list(names ...string) []string {
	var out []string
	for _, n := range names {
		for _, v := range a.values[n] {
			out = append(out, strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })...)
		}
	}
	return out
}

// parseCLI splits args by the option tables. An unknown option is an
// error, as it is for the real CLIs.
func parseCLI(args []string, valueFlags, listFlags, boolFlags map[string]bool) (cliArgs, error) {
	a := cliArgs{values: map[string][]string{}}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "-" || !strings.HasPrefix(arg, "-") {
			a.pos = append(a.pos, arg)
			continue
		}
		name, val, hasVal := strings.Cut(arg, "=")
		switch {
		case boolFlags[name] && !hasVal:
			a.values[name] = append(a.values[name], "")
		case valueFlags[name]:
			if !hasVal {
				if i+1 >= len(args) {
					return a, fmt.Errorf("a value is required for '%s' but none was supplied", name)
				}
				i++
				val = args[i]
			}
			a.values[name] = append(a.values[name], val)
		case listFlags[name]:
			if hasVal {
				a.values[name] = append(a.values[name], val)
			}
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				a.values[name] = append(a.values[name], args[i])
			}
		default:
			return a, fmt.Errorf("unexpected argument '%s' found", arg)
		}
	}
	return a, nil
}

// runCLI plays codex or claude.
func runCLI(mode string, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	path := os.Getenv("FAKEAGENT_SCRIPT")
	if path == "" {
		return 0, fmt.Errorf("fake %s: FAKEAGENT_SCRIPT names no script", mode)
	}
	st, err := nextStep(path)
	if err != nil {
		return 0, err
	}
	if st.SaveArgs != "" {
		if err := writeFile(st.SaveArgs, []byte(strings.Join(args, "\n")+"\n"), false); err != nil {
			return 0, err
		}
	}
	if mode == ModeCodex {
		return st.playCodex(args, stdin, stdout, stderr)
	}
	return st.playClaude(args, stdin, stdout, stderr)
}

// emitter prints JSON events, one per line.
type emitter struct {
	w   io.Writer
	err error
}

func (e *emitter) emit(v any) {
	if e.err != nil {
		return
	}
	line, err := marshalEvent(v)
	if err == nil {
		_, err = fmt.Fprintf(e.w, "%s\n", line)
	}
	e.err = err
}

// marshalEvent encodes an event as the real CLIs print it: "type" first,
// then the other members (sorted).
func marshalEvent(v any) ([]byte, error) {
	line, err := json.Marshal(v)
	m, ok := v.(map[string]any)
	if err != nil || !ok || m["type"] == nil || len(m) < 2 {
		return line, err
	}
	rest := make(map[string]any, len(m)-1)
	for k, x := range m {
		if k != "type" {
			rest[k] = x
		}
	}
	typ, err := json.Marshal(m["type"])
	if err != nil {
		return nil, err
	}
	others, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	return append(append([]byte(`{"type":`), typ...), append([]byte{','}, others[1:]...)...), nil
}

// resetText replaces {reset_at} with now + reset_in in the CLI's format.
func (st *Step) resetText(s, layout string) string {
	if st.ResetIn == "" || !strings.Contains(s, "{reset_at}") {
		return s
	}
	d, _ := time.ParseDuration(st.ResetIn)
	return strings.ReplaceAll(s, "{reset_at}", time.Now().Add(d).Format(layout))
}

// common carries out what both CLIs do before they work: ignore SIGTERM
// when asked, read the prompt, save it, print the env variables asked for
// (on stderr: stdout carries the events).
func (st *Step) common(readPrompt bool, stdin io.Reader, stderr io.Writer) error {
	if st.IgnoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	if readPrompt && st.Stdin != "ignore" {
		prompt, err := io.ReadAll(stdin)
		if err != nil {
			return fmt.Errorf("read stdin: %w", err)
		}
		if st.SavePrompt != "" {
			if err := writeFile(st.SavePrompt, prompt, false); err != nil {
				return err
			}
		}
	}
	for _, name := range st.Env {
		if v, ok := os.LookupEnv(name); ok {
			fmt.Fprintf(stderr, "%s=%s\n", name, v)
		} else {
			fmt.Fprintf(stderr, "%s unset\n", name)
		}
	}
	return nil
}

// hangForever stalls until killed. "reconnect" is codex with its model
// server unreachable (as codex-cli 0.169.0 does it): error events
// "Reconnecting... N/5", then "Reconnecting... waiting for network" with
// growing delays, each with a log line on stderr. "silent" prints nothing.
func hangForever(kind string, ev *emitter, stderr io.Writer) {
	delay := 50 * time.Millisecond
	for n := 1; ; n++ {
		if kind == "reconnect" {
			fmt.Fprintln(stderr, time.Now().UTC().Format(time.RFC3339Nano)+" ERROR codex_api::endpoint::responses_websocket: failed to connect to Responses WebSocket stage=Unknown")
			msg := "Reconnecting... waiting for network (Connection failed: error sending request)"
			if n <= 4 {
				msg = fmt.Sprintf("Reconnecting... %d/5 (stream disconnected before completion: failed to lookup address information: Name does not resolve)", n+1)
			}
			ev.emit(map[string]any{"type": "error", "message": msg})
		}
		time.Sleep(delay)
		delay = min(2*delay, time.Hour)
	}
}

func (st *Step) playCodex(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 || args[0] != "exec" {
		fmt.Fprintln(stderr, "fake codex: only `codex exec` is played")
		return 2, nil
	}
	a, err := parseCLI(args[1:], codexValueFlags, nil, codexBoolFlags)
	if err == nil && len(a.pos) > 1 {
		err = fmt.Errorf("unexpected argument '%s' found", a.pos[1])
	}
	if err == nil {
		switch s := a.value("-s", "--sandbox"); s {
		case "", "read-only", "workspace-write", "danger-full-access":
		default:
			err = fmt.Errorf("invalid value '%s' for '--sandbox <SANDBOX_MODE>'", s)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n\nUsage: codex exec [OPTIONS] [PROMPT]\n\nFor more information, try '--help'.\n", err)
		return 2, nil
	}
	if !a.has("--skip-git-repo-check") {
		if _, err := os.Stat(".git"); err != nil {
			fmt.Fprintln(stderr, "Not inside a trusted directory and --skip-git-repo-check was not specified.")
			return 1, nil
		}
	}
	readPrompt := len(a.pos) == 0 || a.pos[0] == "-"
	if err := st.common(readPrompt, stdin, stderr); err != nil {
		return 0, err
	}
	outFile := a.value("-o", "--output-last-message")
	jsonOut := a.has("--json") && !st.NoEvents
	ev := &emitter{w: io.Discard}
	if jsonOut {
		ev.w = stdout
	}
	const layout = "3:04 PM"
	ev.emit(map[string]any{"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"})
	ev.emit(map[string]any{"type": "turn.started"})
	io.WriteString(stdout, st.Stdout)
	io.WriteString(stderr, st.resetText(st.Stderr, layout))
	if st.Hang != "" {
		hangForever(st.Hang, ev, stderr)
	}
	if st.Sleep != "" {
		d, _ := time.ParseDuration(st.Sleep)
		time.Sleep(d)
	}
	if jsonOut {
		if err := jsonFiller(stdout, st.JSONFiller, codexFillerLine); err != nil {
			return 0, err
		}
	}
	item := 0
	nextID := func() string { item++; return fmt.Sprintf("item_%d", item-1) }
	for _, c := range st.Commands {
		id := nextID()
		ev.emit(map[string]any{"type": "item.started", "item": map[string]any{"id": id, "type": "command_execution",
			"command": c.Command, "aggregated_output": "", "exit_code": nil, "status": "in_progress"}})
		output := c.Output
		if c.Run && !c.Declined {
			output = codexShell(c.Command)
		}
		status, code := "completed", any(c.ExitCode)
		if c.Declined {
			status, code = "declined", nil
		} else if c.ExitCode != 0 {
			status = "failed"
		}
		ev.emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": id, "type": "command_execution",
			"command": c.Command, "aggregated_output": output, "exit_code": code, "status": status}})
	}
	readOnly := a.value("-s", "--sandbox") == "read-only"
	for _, f := range st.Write {
		kind := "add"
		if _, err := os.Stat(f.Path); err == nil {
			kind = "update"
		}
		status := "completed"
		if readOnly {
			status = "failed"
		} else if err := writeFile(f.Path, []byte(f.Content), f.Append); err != nil {
			return 0, err
		}
		ev.emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": nextID(), "type": "file_change",
			"changes": []any{map[string]any{"path": absPath(f.Path), "kind": kind}}, "status": status}})
	}
	if err := st.codexTurns(ev, a.has("--ephemeral")); err != nil {
		return 0, err
	}
	if st.Error != "" {
		msg := st.resetText(st.Error, layout)
		ev.emit(map[string]any{"type": "error", "message": msg})
		ev.emit(map[string]any{"type": "turn.failed", "error": map[string]any{"message": msg}})
		if !jsonOut {
			fmt.Fprintf(stderr, "ERROR: %s\n", msg)
		}
		// A failed turn leaves the output file created but empty.
		if outFile != "" {
			if err := writeFile(outFile, nil, false); err != nil {
				return 0, err
			}
		}
		code := st.Exit
		if code == 0 {
			code = 1
		}
		return code, ev.err
	}
	text := ""
	if len(st.Message) > 0 {
		text = string(st.Message)
		ev.emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": nextID(), "type": "agent_message", "text": text}})
	}
	usage := map[string]any{"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}
	if u := st.totalUsage(); u != nil {
		usage = map[string]any{"input_tokens": u.InputTokens, "cached_input_tokens": u.CachedInputTokens, "output_tokens": u.OutputTokens}
	}
	ev.emit(map[string]any{"type": "turn.completed", "usage": usage})
	if !jsonOut && text != "" {
		fmt.Fprintln(stdout, text)
	}
	if outFile != "" && text != "" {
		if err := writeFile(outFile, []byte(text), false); err != nil {
			return 0, err
		}
	}
	return st.Exit, ev.err
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

func (st *Step) playClaude(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	a, err := parseCLI(args, claudeValueFlags, claudeListFlags, claudeBoolFlags)
	if err != nil {
		fmt.Fprintf(stderr, "error: %s\n", strings.Replace(err.Error(), "unexpected argument", "unknown option", 1))
		return 1, nil
	}
	if !a.has("-p", "--print") {
		fmt.Fprintln(stderr, "fake claude: only `claude -p` is played")
		return 1, nil
	}
	format := a.value("--output-format")
	switch format {
	case "":
		format = "text"
	case "text", "json", "stream-json":
	default:
		fmt.Fprintf(stderr, "error: option '--output-format <format>' argument '%s' is invalid. Allowed choices are text, json, stream-json.\n", format)
		return 1, nil
	}
	if format == "stream-json" && !a.has("--verbose") {
		fmt.Fprintln(stderr, "Error: When using --print, --output-format=stream-json requires --verbose")
		return 1, nil
	}
	mode := a.value("--permission-mode")
	if mode != "" && !claudePermissionModes[mode] {
		fmt.Fprintf(stderr, "error: option '--permission-mode <mode>' argument '%s' is invalid.\n", mode)
		return 1, nil
	}
	skip := a.has("--dangerously-skip-permissions") || mode == "bypassPermissions"
	if skip && os.Geteuid() == 0 && os.Getenv("IS_SANDBOX") != "1" {
		fmt.Fprintln(stderr, "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons")
		return 1, nil
	}
	allowed := a.list("--allowedTools", "--allowed-tools")
	allows := func(tool string) bool {
		for _, t := range allowed {
			if t == tool || strings.HasPrefix(t, tool+"(") {
				return true
			}
		}
		return false
	}
	canEdit := skip || mode == "acceptEdits" || allows("Write") || allows("Edit")
	canBash := skip || allows("Bash")

	if err := st.common(len(a.pos) == 0, stdin, stderr); err != nil {
		return 0, err
	}
	const layout = "3:04pm"
	ev := &emitter{w: io.Discard}
	if format == "stream-json" {
		ev.w = stdout
	}
	session := "7f3c1c2e-5b8a-4f1e-9d2a-0c6b1e4f2a10"
	permMode := mode
	if permMode == "" {
		permMode = "default"
	}
	ev.emit(map[string]any{"type": "system", "subtype": "init", "cwd": absPath("."), "session_id": session,
		"tools": []string{"Bash", "Edit", "Read", "Write"}, "model": "claude-fake-1", "permissionMode": permMode})
	io.WriteString(stdout, st.Stdout)
	io.WriteString(stderr, st.resetText(st.Stderr, layout))
	if st.Hang != "" {
		hangForever("silent", ev, stderr)
	}
	if st.Sleep != "" {
		d, _ := time.ParseDuration(st.Sleep)
		time.Sleep(d)
	}
	if format == "stream-json" {
		if err := jsonFiller(stdout, st.JSONFiller, claudeFillerLine); err != nil {
			return 0, err
		}
	}
	var denials []any
	tool := 0
	use := func(name string, input map[string]any, allowed bool, result string) {
		tool++
		id := fmt.Sprintf("toolu_%02d", tool)
		ev.emit(map[string]any{"type": "assistant", "session_id": session, "message": map[string]any{
			"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}}}})
		isErr := false
		if !allowed {
			isErr = true
			result = fmt.Sprintf("Claude requested permissions to use %s, but you haven't granted it yet.", name)
			denials = append(denials, map[string]any{"tool_name": name, "tool_use_id": id, "tool_input": input})
		}
		ev.emit(map[string]any{"type": "user", "session_id": session, "message": map[string]any{
			"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": result, "is_error": isErr}}}})
	}
	for _, f := range st.Write {
		if canEdit {
			if err := writeFile(f.Path, []byte(f.Content), f.Append); err != nil {
				return 0, err
			}
		}
		use("Write", map[string]any{"file_path": absPath(f.Path), "content": f.Content}, canEdit, "File written: "+f.Path)
	}
	for _, c := range st.Commands {
		out := c.Output
		if c.Run && canBash && !c.Declined {
			out = claudeShell(c.Command, a.value("--settings"))
		}
		use("Bash", map[string]any{"command": c.Command}, canBash && !c.Declined, out)
	}
	if err := st.claudeTurns(ev, session); err != nil {
		return 0, err
	}

	result := map[string]any{"type": "result", "subtype": "success", "is_error": false,
		"duration_ms": 1234, "duration_api_ms": 1100, "num_turns": 1 + tool, "session_id": session,
		"total_cost_usd": 0.0, "usage": map[string]any{"input_tokens": 0, "cache_creation_input_tokens": 0,
			"cache_read_input_tokens": 0, "output_tokens": 0},
		"permission_denials": append([]any{}, denials...)}
	if u := st.totalUsage(); u != nil {
		result["usage"] = map[string]any{"input_tokens": u.InputTokens - u.CachedInputTokens, "cache_creation_input_tokens": 0,
			"cache_read_input_tokens": u.CachedInputTokens, "output_tokens": u.OutputTokens}
		if u.CostUSD != nil {
			result["total_cost_usd"] = *u.CostUSD
		}
	}
	text := st.resetText(st.Text, layout)
	switch {
	case st.Error != "":
		text = st.resetText(st.Error, layout)
		result["is_error"] = true
	case text == "" && len(st.Message) > 0:
		text = "All done.\n```json\n" + string(st.Message) + "\n```"
	}
	if st.APIErrorStatus != 0 {
		result["api_error_status"] = st.APIErrorStatus
	}
	if st.Subtype != "" && st.Subtype != "success" {
		result["subtype"] = st.Subtype
		result["is_error"] = true
		result["errors"] = []string{text}
	} else {
		result["result"] = text
		if text != "" && st.Error == "" {
			ev.emit(map[string]any{"type": "assistant", "session_id": session, "message": map[string]any{
				"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}}})
		}
	}
	switch format {
	case "stream-json":
		ev.emit(result)
	case "json":
		ev.w = stdout
		ev.emit(result)
	default:
		fmt.Fprintln(stdout, text)
	}
	if ev.err != nil {
		return 0, errors.New("print events: " + ev.err.Error())
	}
	return st.Exit, nil
}

// codexShell runs command as codex does: with its user's login shell
// (from /etc/passwd; sh when none), `-lc command`, its output a pipe of
// the CLI's; it returns what the command printed, and how it failed.
func codexShell(command string) string {
	shell := "sh"
	if db, err := os.ReadFile("/etc/passwd"); err == nil {
		uid := strconv.Itoa(os.Getuid())
		for _, line := range strings.Split(string(db), "\n") {
			if f := strings.Split(line, ":"); len(f) == 7 && f[2] == uid && f[6] != "" {
				shell = f[6]
				break
			}
		}
	}
	return runShell(shell, "-lc", command)
}

// claudeShell runs command as Claude Code's Bash tool does: with the
// shell CLAUDE_CODE_SHELL names (sh when unset), `-c command`, its
// standard output and error a pipe of the CLI's; it returns what the
// command printed, and how it failed. The variable is Claude Code's
// environment's, overridden as Claude Code 2.1.328 does by the env of
// its settings: $CLAUDE_CONFIG_DIR/settings.json, then the project's
// .claude/settings.json and settings.local.json, then --settings (JSON
// or a file).
func claudeShell(command, flagSettings string) string {
	shell := os.Getenv("CLAUDE_CODE_SHELL")
	files := []string{".claude/settings.json", ".claude/settings.local.json"}
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		files = append([]string{filepath.Join(d, "settings.json")}, files...)
	}
	var sources [][]byte
	for _, f := range files {
		data, _ := os.ReadFile(f)
		sources = append(sources, data)
	}
	if strings.HasPrefix(flagSettings, "{") {
		sources = append(sources, []byte(flagSettings))
	} else if flagSettings != "" {
		data, _ := os.ReadFile(flagSettings)
		sources = append(sources, data)
	}
	for _, data := range sources {
		var s struct {
			Env map[string]string `json:"env"`
		}
		if json.Unmarshal(data, &s) == nil && s.Env["CLAUDE_CODE_SHELL"] != "" {
			shell = s.Env["CLAUDE_CODE_SHELL"]
		}
	}
	if shell == "" {
		shell = "sh"
	}
	return runShell(shell, "-c", command)
}

func runShell(shell, flag, command string) string {
	out, err := exec.Command(shell, flag, command).CombinedOutput()
	if err != nil {
		return string(out) + err.Error()
	}
	return string(out)
}
