package executor

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/state"
)

// defaultPatterns compiles config.DefaultRateLimitPatterns.
func defaultPatterns(t *testing.T) []*regexp.Regexp {
	t.Helper()
	var out []*regexp.Regexp
	for _, p := range config.DefaultRateLimitPatterns {
		out = append(out, regexp.MustCompile(p))
	}
	return out
}

// setupCLI is setup with the fake playing the codex or claude CLI under
// its preset.
func setupCLI(t *testing.T, mode, script string) (Options, Request) {
	t.Helper()
	o, r := setup(t, script)
	o.Preset, o.Bin, o.Command = mode, o.Command[0], nil
	o.Env["FAKEAGENT_MODE"] = mode
	o.RateLimitPatterns = defaultPatterns(t)
	return o, r
}

func TestScanCodex(t *testing.T) {
	const (
		started   = `{"type":"thread.started","thread_id":"t"}` + "\n" + `{"type":"turn.started"}` + "\n"
		completed = `{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":3}}` + "\n"
	)
	tests := []struct {
		name         string
		stdout       string
		failure, via string
		usage        bool
		declined     int
	}{
		{"completed", started + completed, "", "", true, 0},
		{"turn failed", started + `{"type":"error","message":"boom"}` + "\n" + `{"type":"turn.failed","error":{"message":"429 Too Many Requests"}}` + "\n",
			"429 Too Many Requests", "turn.failed", false, 0},
		{"error without turn.failed", started + `{"type":"error","message":"stream error: gone"}` + "\n", "stream error: gone", "error", false, 0},
		{"error recovered from", started + `{"type":"error","message":"Reconnecting... 1/5"}` + "\n" + completed, "", "", true, 0},
		{"declined command", started + `{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"rm -rf /","aggregated_output":"","exit_code":null,"status":"declined"}}` + "\n" + completed,
			"", "", true, 1},
		{"cut first line and text", `ed":{"usage":1}}` + "\nnot json\n{\"other\":1}\n" + completed, "", "", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := scanCodex([]byte(tt.stdout))
			if s.Failure != tt.failure || s.FailureEvent != tt.via {
				t.Errorf("failure %q via %q, want %q via %q", s.Failure, s.FailureEvent, tt.failure, tt.via)
			}
			if (s.Usage != nil) != tt.usage {
				t.Errorf("usage %+v, want present=%v", s.Usage, tt.usage)
			}
			if len(s.Declined) != tt.declined {
				t.Errorf("declined %q, want %d", s.Declined, tt.declined)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	patterns := defaultPatterns(t)
	okFile := []byte(`{"status":"done","summary":"s"}`)
	claudeLine := func(fields string) string {
		return `{"type":"result","subtype":"success","is_error":false,"result":"{\"status\":\"done\",\"summary\":\"s\"}"` + fields + "}\n"
	}
	tests := []struct {
		name       string
		pr         proc.Result
		outFile    []byte
		stdout     string
		stderr     []string
		class      string
		failed     bool
		evidence   string
		reasonPart string
	}{
		{"ok", proc.Result{}, okFile, "", nil, ClassOK, false, "", ""},
		{"codex turn.failed despite a message file", proc.Result{ExitCode: 1}, okFile,
			`{"type":"turn.failed","error":{"message":"model refused"}}` + "\n", nil,
			ClassAgentError, true, "codex turn.failed: model refused", "codex reported an error (turn.failed): model refused (agent exited with status 1)"},
		{"codex error event with exit 0", proc.Result{}, okFile,
			`{"type":"error","message":"unexpected status 400"}` + "\n", nil,
			ClassAgentError, true, "codex error: unexpected status 400", "codex reported an error (error): unexpected status 400"},
		{"codex 429 on stderr", proc.Result{ExitCode: 1}, nil, "",
			[]string{"Reconnecting... waiting for network", "ERROR: exceeded retry limit, last status: 429 Too Many Requests"},
			ClassRateLimited, true, "stderr: ERROR: exceeded retry limit, last status: 429 Too Many Requests", "usage or rate limit"},
		{"codex usage limit event", proc.Result{ExitCode: 1}, []byte{}, `{"type":"turn.failed","error":{"message":"You've hit your usage limit. Try again later."}}` + "\n", nil,
			ClassRateLimited, true, "codex turn.failed: You've hit your usage limit. Try again later.", ""},
		{"claude is_error with exit 0", proc.Result{}, nil, claudeLine(`,"is_error":true`)[0:0] + `{"type":"result","subtype":"success","is_error":true,"result":"API Error: 500 overloaded"}` + "\n", nil,
			ClassAgentError, true, `claude result (subtype "success", is_error true): API Error: 500 overloaded`, `claude reported an error (subtype "success", is_error true): API Error: 500 overloaded`},
		{"claude api_error_status 429", proc.Result{ExitCode: 1}, nil, `{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"API Error: 429"}` + "\n", nil,
			ClassRateLimited, true, `claude result (subtype "success", is_error true, api_error_status 429): API Error: 429`, ""},
		{"claude error subtype", proc.Result{}, nil, `{"type":"result","subtype":"error_max_turns","is_error":true,"errors":["Reached maximum number of turns (3)"]}` + "\n", nil,
			ClassAgentError, true, `claude result (subtype "error_max_turns", is_error true): Reached maximum number of turns (3)`, ""},
		{"claude usage limit", proc.Result{ExitCode: 1}, nil, `{"type":"result","subtype":"success","is_error":true,"result":"You've hit your limit · resets 3pm (Europe/Berlin)"}` + "\n", nil,
			ClassRateLimited, true, "", ""},
		{"rate limit words in a successful run do not count", proc.Result{}, okFile, "", []string{"implementing the rate limit middleware"},
			ClassOK, false, "", ""},
		{"no message", proc.Result{}, nil, "working\n", []string{"working"}, ClassAgentError, false, "", "agent gave no valid final message"},
		{"exit status", proc.Result{ExitCode: 2}, nil, "", []string{"error: model overloaded"},
			ClassAgentError, true, "stderr: error: model overloaded", "agent exited with status 2"},
		{"signal", proc.Result{ExitCode: -1, Signal: "SIGSEGV"}, nil, "", nil, ClassAgentError, true, "", "agent was killed by SIGSEGV"},
		{"timeout", proc.Result{ExitCode: -1, Signal: "SIGTERM", TimedOut: true}, nil, "", []string{"Reconnecting... waiting for network"},
			ClassTimeout, true, "last line printed: Reconnecting... waiting for network", "timed out"},
		{"idle", proc.Result{ExitCode: -1, Signal: "SIGTERM", Idle: true}, nil, "", nil, ClassIdle, true, "", "printed nothing"},
		{"interrupted", proc.Result{ExitCode: -1, Signal: "SIGTERM", Canceled: true}, nil, "", []string{"429 Too Many Requests"}, ClassInterrupted, false, "", ""},
		{"ok claude", proc.Result{}, nil, claudeLine(""), nil, ClassOK, false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := findMessage(tt.outFile, []byte(tt.stdout))
			v := classify(Options{RateLimitPatterns: patterns}, tt.pr, f, scanCodex([]byte(tt.stdout)), tt.stderr)
			if v.class != tt.class || v.failed != tt.failed {
				t.Fatalf("class %s failed %v (%s), want %s failed %v", v.class, v.failed, v.reason, tt.class, tt.failed)
			}
			if tt.evidence != "" && v.evidence != tt.evidence {
				t.Errorf("evidence %q, want %q", v.evidence, tt.evidence)
			}
			if !strings.Contains(v.reason, tt.reasonPart) {
				t.Errorf("reason %q does not contain %q", v.reason, tt.reasonPart)
			}
		})
	}
}

func TestClassifyResetTime(t *testing.T) {
	now := time.Date(2026, 5, 6, 5, 0, 0, 0, time.Local)
	o := Options{RateLimitPatterns: defaultPatterns(t), Now: func() time.Time { return now }}
	stdout := `{"type":"turn.failed","error":{"message":"You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro) or try again at 7:33 AM."}}` + "\n"
	v := classify(o, proc.Result{ExitCode: 1}, findMessage(nil, []byte(stdout)), scanCodex([]byte(stdout)), nil)
	want := time.Date(2026, 5, 6, 7, 33, 0, 0, time.Local)
	if v.class != ClassRateLimited || v.resetAt == nil || !v.resetAt.Equal(want) {
		t.Fatalf("class %s reset %v, want rate_limited resetting at %s", v.class, v.resetAt, want)
	}
}

func TestParseResetTime(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	now := time.Date(2026, 5, 6, 14, 10, 30, 0, time.UTC)
	tests := []struct {
		text string
		want time.Time
		ok   bool
	}{
		{"You've hit your usage limit. Upgrade to Plus or try again at 7:33 PM.", time.Date(2026, 5, 6, 19, 33, 0, 0, time.UTC), true},
		{"try again at 2:05 PM", time.Date(2026, 5, 7, 14, 5, 0, 0, time.UTC), true},   // past: tomorrow
		{"try again at 2:08 pm", time.Date(2026, 5, 6, 14, 10, 30, 0, time.UTC), true}, // minutes ago: now
		{"or try again at Nov 23rd, 2026 7:33 AM.", time.Date(2026, 11, 23, 7, 33, 0, 0, time.UTC), true},
		{"You've hit your usage limit · resets 3pm", time.Date(2026, 5, 6, 15, 0, 0, 0, time.UTC), true},
		{"You've hit your limit · resets 5:30pm (Europe/Berlin)", time.Date(2026, 5, 6, 17, 30, 0, 0, berlin), true},
		{"You've hit your weekly limit · resets Jan 5, 9am", time.Date(2027, 1, 5, 9, 0, 0, 0, time.UTC), true},
		{"Rate limited: try again in 2 hours 5 minutes", now.Add(2*time.Hour + 5*time.Minute), true},
		{"retry after 30 seconds", now.Add(30 * time.Second), true},
		{"Retry-After: 12", now.Add(12 * time.Second), true},
		{"Claude AI usage limit reached|1778083200", time.Unix(1778083200, 0), true},
		{"429 Too Many Requests", time.Time{}, false},
		{"presets 3pm", time.Time{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseResetTime(tt.text, now)
		if ok != tt.ok || (ok && !got.Equal(tt.want)) {
			t.Errorf("ParseResetTime(%q) = %s, %v; want %s, %v", tt.text, got, ok, tt.want, tt.ok)
		}
	}
}

func TestUsageOf(t *testing.T) {
	cost := 0.42
	claude := &claudeResult{CostUSD: &cost, Usage: &claudeUsage{InputTokens: 100, CacheCreationInputTokens: 20, CacheReadInputTokens: 300, OutputTokens: 50}}
	codex := codexStream{Usage: &codexUsage{InputTokens: 2_000_000, CachedInputTokens: 1_000_000, OutputTokens: 100_000}}
	prices := state.Prices{Input: 1.25, CachedInput: 0.125, Output: 10}
	tests := []struct {
		name string
		c    *claudeResult
		cx   codexStream
		p    state.Prices
		want *state.Usage
	}{
		{"nothing", nil, codexStream{}, prices, nil},
		{"claude reports its cost", claude, codexStream{}, prices,
			&state.Usage{InputTokens: 420, CachedInputTokens: 300, OutputTokens: 50, CostUSD: 0.42, CostSource: state.CostReported}},
		{"codex without prices", nil, codex, state.Prices{},
			&state.Usage{InputTokens: 2_000_000, CachedInputTokens: 1_000_000, OutputTokens: 100_000}},
		{"codex priced", nil, codex, prices,
			&state.Usage{InputTokens: 2_000_000, CachedInputTokens: 1_000_000, OutputTokens: 100_000, CostUSD: 1.25 + 0.125 + 1, CostSource: state.CostComputed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := usageOf(tt.c, tt.cx, tt.p)
			if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Fatalf("usage = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRunFakeCLIs(t *testing.T) {
	tests := []struct {
		name, mode, script string
		args               []string
		class              string
		check              func(t *testing.T, res *Result, r Request)
	}{
		{"codex ok", PresetCodex, `{"default": {"usage": {"input_tokens": 50, "cached_input_tokens": 20, "output_tokens": 5},
			"commands": [{"command": "ls"}], "message": {"status": "done", "summary": "s"}}}`, []string{"--sandbox", "workspace-write"}, ClassOK,
			func(t *testing.T, res *Result, r Request) {
				if res.Usage == nil || res.Usage.InputTokens != 50 || res.MessageSource != SourceOutputFile {
					t.Errorf("usage %+v source %s", res.Usage, res.MessageSource)
				}
				if ev := readFile(t, filepath.Join(r.RunDir, EventsFileName)); !strings.Contains(ev, `"type":"turn.completed"`) {
					t.Errorf("events.jsonl:\n%s", ev)
				}
			}},
		{"codex refuses an unknown flag", PresetCodex, `{"default": {"message": {"status": "done", "summary": "s"}}}`, []string{"--no-such-flag"}, ClassAgentError,
			func(t *testing.T, res *Result, r Request) {
				if res.ExitCode != 2 || !strings.Contains(res.Evidence, "unexpected argument '--no-such-flag' found") {
					t.Errorf("exit %d evidence %q", res.ExitCode, res.Evidence)
				}
			}},
		{"codex failure leaves the -o file empty", PresetCodex, `{"default": {"error": "stream disconnected"}}`, nil, ClassAgentError,
			func(t *testing.T, res *Result, r Request) {
				if got := readFile(t, OutputFile(r.RunDir)); got != "" || res.Message != nil || !res.AgentFailed {
					t.Errorf("output file %q, message %+v, failed %v", got, res.Message, res.AgentFailed)
				}
			}},
		{"codex declined command", PresetCodex, `{"default": {"commands": [{"command": "git push", "declined": true}], "message": {"status": "done", "summary": "s"}}}`, nil, ClassOK,
			func(t *testing.T, res *Result, r Request) {
				if len(res.PermissionDenials) != 1 || res.PermissionDenials[0].Input != "git push" {
					t.Errorf("denials %+v", res.PermissionDenials)
				}
			}},
		{"claude preset command line accepted", PresetClaude, `{"default": {"message": {"status": "done", "summary": "s"}}}`, nil, ClassOK, nil},
		{"claude permission denials", PresetClaude, `{"default": {"write": [{"path": "x.txt", "content": "x"}], "message": {"status": "done", "summary": "s"}}}`, nil, ClassOK,
			func(t *testing.T, res *Result, r Request) {
				if len(res.PermissionDenials) != 1 || res.PermissionDenials[0].Tool != "Write" {
					t.Errorf("denials %+v", res.PermissionDenials)
				}
				if _, err := os.Stat(filepath.Join(r.Root, "x.txt")); err == nil {
					t.Error("the refused write happened")
				}
			}},
		{"claude allowed", PresetClaude, `{"default": {"write": [{"path": "x.txt", "content": "x"}], "commands": [{"command": "go vet"}], "message": {"status": "done", "summary": "s"}}}`,
			config.DefaultArgs(config.PresetClaude), ClassOK,
			func(t *testing.T, res *Result, r Request) {
				if len(res.PermissionDenials) != 0 {
					t.Errorf("denials %+v", res.PermissionDenials)
				}
				if _, err := os.Stat(filepath.Join(r.Root, "x.txt")); err != nil {
					t.Error(err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, r := setupCLI(t, tt.mode, tt.script)
			o.Args = tt.args
			res := runBounded(t, context.Background(), o, r)
			if res.Class != tt.class {
				t.Fatalf("class %s (%s), want %s", res.Class, res.Error, tt.class)
			}
			if tt.check != nil {
				tt.check(t, res, r)
			}
		})
	}
}

func TestFakeClaudeRefusesSkipPermissionsAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("Claude Code refuses --dangerously-skip-permissions only as root")
	}
	o, r := setupCLI(t, PresetClaude, `{"default": {"message": {"status": "done", "summary": "s"}}}`)
	o.Args = []string{"--dangerously-skip-permissions"}
	res := runBounded(t, context.Background(), o, r)
	// The same refusal every time: the agent cannot work (setup), and the
	// run spends no attempt on it.
	if res.Class != ClassUnavailable || res.ExitCode != 1 || UnavailableKind(res) != UnavailableSetup ||
		res.Evidence != "stderr: --dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons" {
		t.Fatalf("class %s exit %d evidence %q", res.Class, res.ExitCode, res.Evidence)
	}
	o.Env["IS_SANDBOX"] = "1"
	if res := runBounded(t, context.Background(), o, r); res.Class != ClassOK {
		t.Fatalf("with IS_SANDBOX=1: class %s (%s)", res.Class, res.Error)
	}
}

// TestRunClosesStdin runs the codex preset while the runner's own stdin
// is a pipe nobody ever closes: the agent must get the prompt on a stdin
// of its own that ends, or `codex exec -` waits for it forever.
func TestRunClosesStdin(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	defer pr.Close()
	old := os.Stdin
	os.Stdin = pr
	t.Cleanup(func() { os.Stdin = old })

	o, r := setupCLI(t, PresetCodex, `{"default": {"save_prompt": "seen.md", "message": {"status": "done", "summary": "s"}}}`)
	o.Timeout = 30 * time.Second
	res := runBounded(t, context.Background(), o, r)
	if res.Class != ClassOK {
		t.Fatalf("class %s (%s): the agent did not see its stdin end", res.Class, res.Error)
	}
	if got := readFile(t, filepath.Join(r.Root, "seen.md")); got != string(r.Prompt) {
		t.Errorf("the agent read %q, want the prompt %q", got, r.Prompt)
	}
}

func TestRunRetryAppendsAndReadsOnlyItsOwnOutput(t *testing.T) {
	o, r := setupCLI(t, PresetCodex, `{"steps": [
	  {"attempt": 1, "stderr": "ERROR: exceeded retry limit, last status: 429 Too Many Requests\n", "error": "exceeded retry limit, last status: 429 Too Many Requests"},
	  {"attempt": 2, "stderr": "note: all good now\n", "message": {"status": "done", "summary": "s"}}]}`)
	first := runBounded(t, context.Background(), o, r)
	if first.Class != ClassRateLimited {
		t.Fatalf("first run class %s (%s)", first.Class, first.Error)
	}
	r.Retry = 1
	second := runBounded(t, context.Background(), o, r)
	if second.Class != ClassOK || strings.Contains(second.LogTail, "429") {
		t.Fatalf("second run class %s, log tail %q", second.Class, second.LogTail)
	}
	log := readFile(t, filepath.Join(r.RunDir, LogFileName))
	if !strings.Contains(log, "429 Too Many Requests") || !strings.Contains(log, "agent run 2 of iteration 7") || !strings.Contains(log, "all good now") {
		t.Errorf("executor.log does not hold both runs:\n%s", log)
	}
	if ev := readFile(t, filepath.Join(r.RunDir, EventsFileName)); strings.Count(ev, `"type":"thread.started"`) != 2 {
		t.Errorf("events.jsonl does not hold both runs:\n%s", ev)
	}
}

// TestClassifyRealOutput classifies output captured from the real CLIs
// (testdata/real): codex-cli 0.169.0 with no network, stopped by the
// runner's deadline, and Claude Code 2.1.197 not logged in.
func TestClassifyRealOutput(t *testing.T) {
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join("testdata", "real", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	o := Options{Preset: PresetCodex, RateLimitPatterns: defaultPatterns(t), Timeout: time.Minute}

	codexOut := read("codex-0.169.0-offline.stdout")
	cx := scanCodex(codexOut)
	if cx.Failure != "Reconnecting... waiting for network (Connection failed: error sending request)" || cx.FailureEvent != "error" {
		t.Errorf("codex offline: failure %q via %q", cx.Failure, cx.FailureEvent)
	}
	stderr := outsideLines(string(read("codex-0.169.0-offline.stderr")), PresetCodex, clueLines)
	v := classify(o, proc.Result{ExitCode: -1, Signal: "SIGTERM", TimedOut: true}, findMessage([]byte{}, codexOut), cx, stderr)
	if v.class != ClassTimeout || v.evidence != "codex error: Reconnecting... waiting for network (Connection failed: error sending request)" {
		t.Errorf("codex offline: class %s evidence %q", v.class, v.evidence)
	}

	claudeOut := read("claude-2.1.197-not-logged-in.stdout")
	o.Preset = PresetClaude
	f := findMessage(nil, claudeOut)
	v = classify(o, proc.Result{ExitCode: 1}, f, scanCodex(claudeOut), nil)
	if v.class != ClassUnavailable || !v.failed ||
		v.evidence != `claude result (subtype "success", is_error true): Not logged in · Please run /login` {
		t.Errorf("claude not logged in: class %s failed %v evidence %q", v.class, v.failed, v.evidence)
	}
	if u := usageOf(f.claude, codexStream{}, state.Prices{}); u == nil || u.CostSource != state.CostReported || u.CostUSD != 0 {
		t.Errorf("claude not logged in: usage %+v", u)
	}
}

// TestClassifyUnavailable classifies what the real CLIs print when their
// API refuses the key (401, 403) or the model (404), captured through
// the mock model (testdata/real): the agent cannot work, by kind; a 500
// stays an agent error.
func TestClassifyUnavailable(t *testing.T) {
	for _, tt := range []struct {
		file, preset, class, kind, evidence string
	}{
		{"codex-0.169.0-401.stdout", PresetCodex, ClassUnavailable, UnavailableAuth, "codex turn.failed: unexpected status 401 Unauthorized: Incorrect API key provided"},
		{"codex-0.169.0-unknown-model.stdout", PresetCodex, ClassUnavailable, UnavailableModel, "codex turn.failed: The model `gpt-9` does not exist"},
		{"claude-2.1.328-401.stdout", PresetClaude, ClassUnavailable, UnavailableAuth, `claude result (subtype "success", is_error true, api_error_status 401): Invalid API key · Fix external API key`},
		{"claude-2.1.328-403.stdout", PresetClaude, ClassUnavailable, UnavailableAuth, `claude result (subtype "success", is_error true, api_error_status 403): Failed to authenticate. API Error: 403`},
		{"claude-2.1.328-unknown-model.stdout", PresetClaude, ClassUnavailable, UnavailableModel, `claude result (subtype "success", is_error true, api_error_status 404): There's an issue with the selected model`},
		{"claude-2.1.328-500.stdout", PresetClaude, ClassAgentError, "", `claude result (subtype "success", is_error true, api_error_status 500)`},
	} {
		out, err := os.ReadFile(filepath.Join("testdata", "real", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		o := Options{Preset: tt.preset, RateLimitPatterns: defaultPatterns(t), Timeout: time.Minute}
		v := classify(o, proc.Result{ExitCode: 1}, findMessage(nil, out), scanCodex(out), nil)
		if v.class != tt.class || !strings.HasPrefix(v.evidence, tt.evidence) {
			t.Errorf("%s: class %s evidence %q; want %s, %q", tt.file, v.class, v.evidence, tt.class, tt.evidence)
		}
		res := &Result{Class: v.class, Error: v.reason}
		if got := UnavailableKind(res); got != tt.kind {
			t.Errorf("%s: kind %q, want %q (%s)", tt.file, got, tt.kind, v.reason)
		}
	}
	// A failing test inside a run that went well is not the agent's
	// credentials: only a failed run is looked at.
	v := classify(Options{Preset: PresetCommand}, proc.Result{}, found{}, codexStream{}, []string{"GET /api 401 Unauthorized"})
	if v.class == ClassUnavailable {
		t.Errorf("a run that did not fail was classed unavailable")
	}
}

// TestBacktraceIsNoEvidence: a backtrace frame names no error of its own,
// even when it reads "<unknown>"; the line that reports the error does.
func TestBacktraceIsNoEvidence(t *testing.T) {
	for line, want := range map[string]bool{
		"  13: <unknown>":                false,
		"    at main (/x.js:1:2) failed": false,
		"Error: failed to initialize in-process app-server client: Permission denied (os error 13)": true,
	} {
		if got := errorLine.MatchString(line) && !backtraceFrame.MatchString(line); got != want {
			t.Errorf("%q as evidence: %v; want %v", line, got, want)
		}
	}
}
