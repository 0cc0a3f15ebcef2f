package executor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/fakeagent"
	"github.com/runner-cli/runner/internal/sandbox"
)

// The test binary doubles as the fake agent when this variable is set.
const fakeEnvVar = "EXEC_TEST_BE_FAKEAGENT"

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnvVar) == "1" {
		os.Exit(fakeagent.Main())
	}
	os.Exit(m.Run())
}

// setup makes a repository with .runner/runs/000007 and returns options
// running the fake agent with script as preset "command", and a request.
func setup(t *testing.T, script string) (Options, Request) {
	t.Helper()
	root := t.TempDir()
	runnerDir := filepath.Join(root, ".runner")
	runDir := filepath.Join(runnerDir, "runs", "000007")
	stateDir := filepath.Join(runnerDir, "state")
	for _, d := range []string{runDir, stateDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	scriptPath := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(scriptPath, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	prompt := []byte("# Runner Contract\nDo the thing.\n")
	promptFile := filepath.Join(runDir, "prompt.md")
	schemaFile := filepath.Join(stateDir, "output.schema.json")
	if err := os.WriteFile(promptFile, prompt, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(schemaFile, []byte(OutputSchema), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o := Options{
		Preset:  PresetCommand,
		Command: []string{exe},
		Grace:   time.Second,
		Env: map[string]string{
			fakeEnvVar:         "1",
			"FAKEAGENT_SCRIPT": scriptPath,
			"FAKEAGENT_STATE":  filepath.Dir(scriptPath),
		},
		OutputLimit: 1 << 20,
	}
	r := Request{
		Root: root, RunnerDir: runnerDir, RunDir: runDir,
		Iteration: 7, NodeID: "calc.parse",
		Prompt: prompt, PromptFile: promptFile, SchemaFile: schemaFile,
	}
	return o, r
}

func runBounded(t *testing.T, ctx context.Context, o Options, r Request) *Result {
	t.Helper()
	type out struct {
		res *Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := Run(ctx, o, r)
		done <- out{res, err}
	}()
	select {
	case got := <-done:
		if got.err != nil {
			t.Fatalf("Run: %v", got.err)
		}
		return got.res
	case <-time.After(2 * time.Minute):
		t.Fatal("Run did not return within 2 minutes")
		return nil
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestBuildArgv(t *testing.T) {
	ph := Placeholders{PromptFile: "/r/p.md", OutputFile: "/r/out.txt", SchemaFile: "/s/schema.json", Iteration: 12, Node: "ops"}
	tests := []struct {
		name    string
		o       Options
		want    []string
		wantErr string
	}{
		{"codex", Options{Preset: "codex"},
			[]string{"codex", "exec", "--json", "--skip-git-repo-check", "--output-last-message", "/r/out.txt", "--output-schema", "/s/schema.json", "-"}, ""},
		{"codex with bin and args", Options{Preset: "codex", Bin: "/opt/codex", Args: []string{"-m", "o3", "--cd={node}"}},
			[]string{"/opt/codex", "exec", "--json", "--skip-git-repo-check", "--output-last-message", "/r/out.txt", "--output-schema", "/s/schema.json", "-m", "o3", "--cd=ops", "-"}, ""},
		{"claude", Options{Preset: "claude"},
			[]string{"claude", "-p", "--output-format", "stream-json", "--verbose"}, ""},
		{"claude with args", Options{Preset: "claude", Bin: "cl", Args: []string{"--model", "sonnet", `--json-schema={"type":"object"}`}},
			[]string{"cl", "-p", "--output-format", "stream-json", "--verbose", "--model", "sonnet", `--json-schema={"type":"object"}`}, ""},
		{"command placeholders", Options{Preset: "command", Command: []string{"agent", "--prompt={prompt_file}", "{output_file}", "{schema_file}", "it-{iteration}-{node}", "{unknown}"}},
			[]string{"agent", "--prompt=/r/p.md", "/r/out.txt", "/s/schema.json", "it-12-ops", "{unknown}"}, ""},
		{"command empty", Options{Preset: "command"}, nil, "executor.command is empty"},
		{"no preset", Options{}, nil, "executor.preset is not set"},
		{"unknown preset", Options{Preset: "gemini"}, nil, `executor.preset "gemini" is unknown`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BuildArgv(tt.o, ph)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("BuildArgv error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("BuildArgv = %q, %v\nwant %q", got, err, tt.want)
			}
		})
	}
}

func TestRunMissingProgram(t *testing.T) {
	_, r := setup(t, `{}`)
	t.Setenv("PATH", t.TempDir())
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"codex", Options{Preset: "codex"},
			"codex: executable not found in $PATH; install it with npm install -g @openai/codex or set executor.bin"},
		{"claude", Options{Preset: "claude"},
			"claude: executable not found in $PATH; install it with npm install -g @anthropic-ai/claude-code or set executor.bin"},
		{"command", Options{Preset: "command", Command: []string{"my-agent"}},
			"my-agent: executable not found in $PATH; check executor.command"},
		{"relative path from the root", Options{Preset: "command", Command: []string{"./bin/agent"}},
			"./bin/agent: executor.command is not an executable file"},
		{"bin path", Options{Preset: "codex", Bin: "/nonexistent/codex"},
			"/nonexistent/codex: executor.bin is not an executable file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(context.Background(), tt.o, r)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run = %+v, %v; want error %q", res, err, tt.want)
			}
			var se *StartError
			if !errors.As(err, &se) {
				t.Fatalf("Run error %v (%T) is not a *StartError", err, err)
			}
		})
	}
}

func TestRunRelativeCommandFromRoot(t *testing.T) {
	o, r := setup(t, `{"default": {"message": {"status": "done", "summary": "ok"}}}`)
	// A command given relative to the repository root runs from there.
	link := filepath.Join(r.Root, "agent")
	if err := os.Symlink(o.Command[0], link); err != nil {
		t.Fatal(err)
	}
	o.Command = []string{"./agent"}
	if res := runBounded(t, context.Background(), o, r); res.Class != ClassOK {
		t.Fatalf("Run = %+v, want ok", res)
	}
}

func TestRunEnvPromptAndPlaceholders(t *testing.T) {
	o, r := setup(t, `{"default": {
		"save_prompt": "seen-prompt.md", "save_args": "seen-args.txt",
		"env": ["RUNNER_PROMPT_FILE", "RUNNER_OUTPUT_FILE", "RUNNER_SCHEMA_FILE", "RUNNER_ITERATION",
		        "RUNNER_NODE_ID", "RUNNER_DIR", "CLAUDECODE", "RUNNER_ENGINE_KEY_FILE", "DROP_ME", "KEEP_ME", "EXTRA"],
		"message": {"status": "done", "summary": "ok"}}}`)
	t.Setenv("CLAUDECODE", "1")
	t.Setenv(sandbox.EngineKeyVar, "/etc/runner/engine.key") // the runner's secret
	t.Setenv("DROP_ME", "secret")
	t.Setenv("KEEP_ME", "kept")
	o.EnvDrop = []string{"DROP_ME"}
	o.Env["EXTRA"] = "extra value"
	o.Env["RUNNER_NODE_ID"] = "hijacked" // the runner's own variables win
	o.Command = append(o.Command, "{node}", "{iteration}", "{prompt_file}", "{output_file}", "{schema_file}")
	res := runBounded(t, context.Background(), o, r)
	if res.Class != ClassOK || res.Error != "" {
		t.Fatalf("Run = %+v", res)
	}
	out := OutputFile(r.RunDir)
	wantEnv := strings.Join([]string{
		"RUNNER_PROMPT_FILE=" + r.PromptFile,
		"RUNNER_OUTPUT_FILE=" + out,
		"RUNNER_SCHEMA_FILE=" + r.SchemaFile,
		"RUNNER_ITERATION=7",
		"RUNNER_NODE_ID=calc.parse",
		"RUNNER_DIR=" + r.RunnerDir,
		"CLAUDECODE unset",
		"RUNNER_ENGINE_KEY_FILE unset",
		"DROP_ME unset",
		"KEEP_ME=kept",
		"EXTRA=extra value",
	}, "\n") + "\n"
	if got := readFile(t, filepath.Join(r.RunDir, LogFileName)); got != wantEnv {
		t.Errorf("environment seen by the agent:\n%s\nwant:\n%s", got, wantEnv)
	}
	if got := readFile(t, filepath.Join(r.Root, "seen-prompt.md")); got != string(r.Prompt) {
		t.Errorf("agent read prompt %q, want %q", got, r.Prompt)
	}
	wantArgs := strings.Join([]string{"calc.parse", "7", r.PromptFile, out, r.SchemaFile}, "\n") + "\n"
	if got := readFile(t, filepath.Join(r.Root, "seen-args.txt")); got != wantArgs {
		t.Errorf("agent args %q, want %q", got, wantArgs)
	}
	if !reflect.DeepEqual(res.Argv[1:], strings.Fields(wantArgs)) {
		t.Errorf("Result.Argv = %q", res.Argv)
	}
	if _, err := os.Stat(filepath.Join(r.RunDir, EventsFileName)); !os.IsNotExist(err) {
		t.Errorf("preset command wrote %s (err %v)", EventsFileName, err)
	}
}

func TestRunClassifiesAndFindsMessage(t *testing.T) {
	done := `{"status": "done", "summary": "all good"}`
	tests := []struct {
		name       string
		preset     string
		script     string
		stale      string // content of a leftover output file from an earlier run
		wantClass  string
		wantSource string
		wantSum    string
		wantErr    []string // substrings of Result.Error
		wantMsgErr string
	}{
		{"output file", "command", `{"default": {"message": ` + done + `}}`, "",
			ClassOK, SourceOutputFile, "all good", nil, ""},
		{"stdout with text around", "command", `{"default": {"message": ` + done + `, "deliver": "stdout"}}`, "",
			ClassOK, SourceStdout, "all good", nil, ""},
		{"stale output file is never read", "command", `{"default": {"message": ` + done + `, "deliver": "stdout"}}`,
			`{"status": "blocked", "summary": "STALE"}`, ClassOK, SourceStdout, "all good", nil, ""},
		{"stale output file and no message", "command", `{"default": {"deliver": "none"}}`,
			`{"status": "done", "summary": "STALE"}`, ClassAgentError, "", "",
			[]string{"agent gave no valid final message: no output file was written"}, "no output file"},
		{"codex preset", "codex", `{"default": {"stdout": "{\"type\":\"thread.started\"}\n", "message": ` + done + `}}`, "",
			ClassOK, SourceOutputFile, "all good", nil, ""},
		{"claude preset", "claude", `{"default": {"message": ` + done + `, "deliver": "claude"}}`, "",
			ClassOK, SourceResultEvent, "all good", nil, ""},
		{"claude is_error with exit 0", "claude", `{"default": {"deliver": "claude", "is_error": true, "text": "API Error: 500 overloaded"}}`, "",
			ClassAgentError, SourceResultEvent, "", []string{`claude reported an error (subtype "error_during_execution", is_error true)`, "API Error: 500 overloaded"},
			"claude result text holds no JSON object"},
		{"garbage", "command", `{"default": {"deliver": "garbage"}}`, "",
			ClassAgentError, SourceOutputFile, "", []string{"no valid final message: output file: holds no JSON object"}, "holds no JSON object"},
		{"invalid message", "command", `{"default": {"message": {"status": "finished", "summary": "x"}}}`, "",
			ClassAgentError, SourceOutputFile, "", []string{`status "finished"`}, `status "finished"`},
		{"exit status with evidence", "command", `{"default": {"stderr": "fatal: boom\n", "message": ` + done + `, "exit": 2}}`, "",
			ClassAgentError, SourceOutputFile, "all good", []string{"agent exited with status 2", "last lines of executor.log:\nfatal: boom"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, r := setup(t, tt.script)
			if tt.preset != "command" {
				o.Preset, o.Bin, o.Command = tt.preset, o.Command[0], nil
			}
			if tt.stale != "" {
				if err := os.WriteFile(OutputFile(r.RunDir), []byte(tt.stale), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			res := runBounded(t, context.Background(), o, r)
			if res.Class != tt.wantClass || res.MessageSource != tt.wantSource {
				t.Fatalf("Class, MessageSource = %q, %q; want %q, %q (Error %q, MessageError %q)",
					res.Class, res.MessageSource, tt.wantClass, tt.wantSource, res.Error, res.MessageError)
			}
			if tt.wantSum == "" && res.Message != nil {
				t.Errorf("Message = %+v, want none", res.Message)
			}
			if tt.wantSum != "" && (res.Message == nil || res.Message.Summary != tt.wantSum) {
				t.Errorf("Message = %+v, want summary %q", res.Message, tt.wantSum)
			}
			if (tt.wantClass == ClassOK) != (res.Error == "") {
				t.Errorf("Error = %q with class %s", res.Error, res.Class)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(res.Error, want) {
					t.Errorf("Error = %q, want it to contain %q", res.Error, want)
				}
			}
			if !strings.Contains(res.MessageError, tt.wantMsgErr) || (tt.wantMsgErr == "") != (res.MessageError == "") {
				t.Errorf("MessageError = %q, want %q", res.MessageError, tt.wantMsgErr)
			}
			events := filepath.Join(r.RunDir, EventsFileName)
			if tt.preset == "command" {
				return
			}
			data, err := os.ReadFile(events)
			if err != nil || len(data) == 0 {
				t.Errorf("preset %s: %s = %d bytes, %v; want the stdout events", tt.preset, EventsFileName, len(data), err)
			}
		})
	}
}

func TestRunCodexArgvReachesAgent(t *testing.T) {
	o, r := setup(t, `{"default": {"save_args": "args.txt", "message": {"status": "done", "summary": "s"}}}`)
	o.Preset, o.Bin, o.Command = PresetCodex, o.Command[0], nil
	o.Args = []string{"--model", "o3"}
	if res := runBounded(t, context.Background(), o, r); res.Class != ClassOK {
		t.Fatalf("Run = %+v", res)
	}
	want := []string{"exec", "--json", "--skip-git-repo-check", "--output-last-message", OutputFile(r.RunDir),
		"--output-schema", r.SchemaFile, "--model", "o3", "-"}
	if got := strings.Fields(readFile(t, filepath.Join(r.Root, "args.txt"))); !reflect.DeepEqual(got, want) {
		t.Errorf("codex args = %q, want %q", got, want)
	}
}

func TestRunStops(t *testing.T) {
	tests := []struct {
		name      string
		script    string
		setup     func(*Options)
		cancel    bool
		wantClass string
		wantErr   string
	}{
		{"timeout", `{"default": {"stdout": "working\n", "sleep": "60s", "message": {"status": "done", "summary": "late"}}}`,
			func(o *Options) { o.Timeout = time.Second }, false, ClassTimeout, "agent timed out after 1s"},
		{"idle", `{"default": {"stdout": "working\n", "sleep": "60s"}}`,
			func(o *Options) { o.IdleTimeout = time.Second }, false, ClassIdle, "agent printed nothing for 1s"},
		{"interrupted", `{"default": {"sleep": "60s"}}`, nil, true, ClassInterrupted, "interrupted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, r := setup(t, tt.script)
			if tt.setup != nil {
				tt.setup(&o)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var pgid int
			r.OnStart = func(_, g int) {
				pgid = g
				if tt.cancel {
					cancel()
				}
			}
			res := runBounded(t, ctx, o, r)
			if res.Class != tt.wantClass || !strings.Contains(res.Error, tt.wantErr) {
				t.Fatalf("Class, Error = %q, %q; want %q, %q", res.Class, res.Error, tt.wantClass, tt.wantErr)
			}
			if pgid == 0 {
				t.Errorf("OnStart was not called")
			}
			if res.Message != nil {
				t.Errorf("Message = %+v from an agent that never delivered one", res.Message)
			}
		})
	}
}

func TestRunLogTailAndLimit(t *testing.T) {
	o, r := setup(t, `{"default": {"stdout": "first line\n", "filler": 200000, "stderr": "", "message": {"status": "done", "summary": "s"}}}`)
	o.OutputLimit = 4096
	res := runBounded(t, context.Background(), o, r)
	if res.Class != ClassOK {
		t.Fatalf("Run = %+v", res)
	}
	log := readFile(t, filepath.Join(r.RunDir, LogFileName))
	if len(log) > 4096 || !strings.HasPrefix(log, "first line\n") || !strings.Contains(log, "bytes of output cut here") {
		t.Errorf("executor.log is %d bytes, want head, marker and tail within 4096", len(log))
	}
	if res.CutBytes == 0 || res.LogBytes != 200000+int64(len("first line\n")) {
		t.Errorf("LogBytes, CutBytes = %d, %d", res.LogBytes, res.CutBytes)
	}
	lines := strings.Split(res.LogTail, "\n")
	if len(lines) != logTailLines || lines[len(lines)-1] != strings.Repeat("f", 63) {
		t.Errorf("LogTail has %d lines ending %q, want %d filler lines", len(lines), lines[len(lines)-1], logTailLines)
	}
}

func TestLastLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	var b bytes.Buffer
	for i := range 5000 {
		b.WriteString(strings.Repeat("x", i%7) + "\n")
	}
	b.WriteString("end without newline")
	os.WriteFile(path, b.Bytes(), 0o644)
	got := strings.Split(lastLines(path, 3), "\n")
	if len(got) != 3 || got[2] != "end without newline" {
		t.Errorf("lastLines = %q", got)
	}
	if lastLines(filepath.Join(t.TempDir(), "missing"), 3) != "" {
		t.Errorf("lastLines of a missing file is not empty")
	}
}

func TestRunUnusableOutputFile(t *testing.T) {
	o, r := setup(t, `{}`)
	o.Env = nil
	o.Command = []string{"sh", "-c", `printf '\377 not UTF-8' > "$RUNNER_OUTPUT_FILE"; echo '{"status":"done","summary":"stdout"}'`}
	res := runBounded(t, context.Background(), o, r)
	if res.Class != ClassAgentError || res.MessageSource != SourceOutputFile || !strings.Contains(res.MessageError, "invalid UTF-8") {
		t.Fatalf("Run = %+v, want an agent error about the output file", res)
	}
}
