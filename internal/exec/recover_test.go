package executor

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRecoverMatchesRun runs an agent, then rebuilds its Result from the
// files it left, as a resuming runner would, and compares the two.
func TestRecoverMatchesRun(t *testing.T) {
	done := `{"status": "done", "summary": "all good"}`
	tests := []struct {
		name, preset, script string
		limit                int64
		runs                 int    // agent runs of the iteration (the later after rate limits)
		class                string // of the recovered Result; "" = Recover returns nil
	}{
		{"codex ok", PresetCodex, `{"default": {"usage": {"input_tokens": 50, "cached_input_tokens": 20, "output_tokens": 5},
			"commands": [{"command": "git push", "declined": true}], "stderr": "warning: x\n", "message": ` + done + `}}`, 0, 1, ClassOK},
		{"codex rate limited", PresetCodex, `{"default": {"error": "exceeded retry limit, last status: 429 Too Many Requests"}}`, 0, 1, ClassRateLimited},
		{"codex turn failed", PresetCodex, `{"default": {"error": "stream disconnected before completion"}}`, 0, 1, ClassAgentError},
		{"codex huge stream", PresetCodex, `{"default": {"json_filler": 3000000, "usage": {"input_tokens": 9, "output_tokens": 1},
			"message": ` + done + `}}`, 64 << 10, 1, ClassOK},
		{"codex ok after a rate limit", PresetCodex, `{"steps": [
			{"attempt": 1, "stderr": "ERROR: 429 Too Many Requests\n", "error": "429 Too Many Requests"},
			{"attempt": 2, "usage": {"input_tokens": 7, "output_tokens": 1}, "message": ` + done + `}]}`, 0, 2, ClassOK},
		{"claude ok", PresetClaude, `{"default": {"usage": {"input_tokens": 10, "output_tokens": 2, "cost_usd": 0.5},
			"write": [{"path": "x.txt", "content": "x"}], "message": ` + done + `}}`, 0, 1, ClassOK},
		{"claude huge stream", PresetClaude, `{"default": {"json_filler": 3000000, "message": ` + done + `}}`, 64 << 10, 1, ClassOK},
		{"claude 429", PresetClaude, `{"default": {"error": "API Error: 429 rate_limit_error", "api_error_status": 429, "exit": 1}}`, 0, 1, ClassRateLimited},
		{"claude is_error", PresetClaude, `{"default": {"error": "API Error: 500 overloaded"}}`, 0, 1, ClassAgentError},
		{"claude result without a message", PresetClaude, `{"default": {"text": "I could not finish."}}`, 0, 1, ClassAgentError},
		{"command, output file", PresetCommand, `{"default": {"stdout": "working\n", "message": ` + done + `}}`, 0, 1, ClassOK},
		{"command, stdout", PresetCommand, `{"default": {"message": ` + done + `, "deliver": "stdout"}}`, 0, 1, ClassOK},
		{"command, claude envelope", PresetCommand, `{"default": {"message": ` + done + `, "deliver": "claude"}}`, 0, 1, ClassOK},
		{"command, no message", PresetCommand, `{"default": {"stdout": "gave up\n"}}`, 0, 1, ""},
		{"command, invalid message", PresetCommand, `{"default": {"message": {"status": "finished", "summary": "x"}}}`, 0, 1, ""},
		{"codex without a message", PresetCodex, `{"default": {"stdout": ""}}`, 0, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o Options
			var r Request
			if tt.preset == PresetCommand {
				o, r = setup(t, tt.script)
			} else {
				o, r = setupCLI(t, tt.preset, tt.script)
			}
			if tt.limit > 0 {
				o.OutputLimit = tt.limit
			}
			var res *Result
			for retry := range tt.runs {
				r.Retry = retry
				res = runBounded(t, context.Background(), o, r)
			}
			r.Retry = 0 // a resuming runner may not know it

			// With the exit record the agent's reaper wrote, Recover knows
			// how the run ended, and gives Run's result.
			withExit, err := Recover(o, r)
			if err != nil {
				t.Fatal(err)
			}
			if withExit == nil || withExit.ExitCode != res.ExitCode || withExit.Class != res.Class || !reflect.DeepEqual(withExit.Message, res.Message) {
				t.Fatalf("Recover with the exit record = %+v; want Run's exit %d, class %s, message %+v", withExit, res.ExitCode, res.Class, res.Message)
			}

			// Without it (a runner that started the agent itself and died
			// before writing it), the files alone tell.
			if err := os.Remove(filepath.Join(r.RunDir, ExitFileName)); err != nil {
				t.Fatal(err)
			}
			got, err := Recover(o, r)
			if err != nil {
				t.Fatal(err)
			}
			if tt.class == "" {
				if got != nil {
					t.Fatalf("Recover = %+v, want nil (Run: class %s, %s)", got, res.Class, res.MessageError)
				}
				return
			}
			if got == nil {
				t.Fatalf("Recover = nil; Run: class %s, message %+v (%s)", res.Class, res.Message, res.MessageError)
			}
			if !got.Recovered || got.ExitCode != -1 || got.Signal != "" || got.Class != tt.class {
				t.Errorf("recovered %v, exit %d %q, class %s (%s); want class %s", got.Recovered, got.ExitCode, got.Signal, got.Class, got.Error, tt.class)
			}
			same := func(what string, a, b any) {
				if !reflect.DeepEqual(a, b) {
					t.Errorf("%s: recovered %+v, Run %+v", what, a, b)
				}
			}
			same("class", got.Class, res.Class)
			same("message", got.Message, res.Message)
			same("message source", got.MessageSource, res.MessageSource)
			same("usage", got.Usage, res.Usage)
			same("denials", got.PermissionDenials, res.PermissionDenials)
			same("evidence", got.Evidence, res.Evidence)
			same("log tail", got.LogTail, res.LogTail)
			same("failed", got.AgentFailed, res.AgentFailed)
			same("cut", got.CutBytes, res.CutBytes)
			if res.ExitCode == 0 {
				same("error", got.Error, res.Error)
				same("message error", got.MessageError, res.MessageError)
			}
		})
	}
}

// TestRecoverUnfinishedRun: an agent stopped before it ended leaves
// nothing that says it finished, also when an earlier run of the
// iteration failed: Recover reads only the last run.
func TestRecoverUnfinishedRun(t *testing.T) {
	o, r := setupCLI(t, PresetCodex, `{"steps": [
	  {"attempt": 1, "error": "429 Too Many Requests"},
	  {"attempt": 2, "stderr": "working\n", "sleep": "60s", "message": {"status": "done", "summary": "late"}}]}`)
	if res := runBounded(t, context.Background(), o, r); res.Class != ClassRateLimited {
		t.Fatalf("first run: class %s (%s)", res.Class, res.Error)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.Retry = 1
	r.OnStart = func(int, int) {
		time.AfterFunc(500*time.Millisecond, cancel)
	}
	if res := runBounded(t, ctx, o, r); res.Class != ClassInterrupted {
		t.Fatalf("second run: class %s", res.Class)
	}
	got, err := Recover(o, r)
	if err != nil || got != nil {
		t.Fatalf("Recover = %+v, %v; want nil: the last run did not finish", got, err)
	}
}

func TestLogTail(t *testing.T) {
	o, r := setupCLI(t, PresetCodex, `{"steps": [
	  {"attempt": 1, "stderr": "first run\n", "error": "429 Too Many Requests"},
	  {"attempt": 2, "json_filler": 100000, "stderr": "second run\nstill working\n", "sleep": "60s"}]}`)
	if got := LogTail(o, r.RunDir); got != "" {
		t.Errorf("LogTail before any run = %q", got)
	}
	runBounded(t, context.Background(), o, r)
	if got := LogTail(o, r.RunDir); got != "first run" {
		t.Errorf("LogTail after the first run = %q, want its stderr without the runner's first line", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.Retry = 1
	r.OnStart = func(int, int) {
		// Stop the agent once its lines are in the log.
		go func() {
			defer cancel()
			for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if data, _ := os.ReadFile(filepath.Join(r.RunDir, LogFileName)); strings.Contains(string(data), "still working\n") {
					return
				}
			}
		}()
	}
	res := runBounded(t, ctx, o, r)
	if got := LogTail(o, r.RunDir); got != "second run\nstill working" || got != res.LogTail {
		t.Errorf("LogTail after an interrupted second run = %q (Run said %q)", got, res.LogTail)
	}
}

func TestRecoverWithoutFiles(t *testing.T) {
	o, r := setupCLI(t, PresetClaude, `{}`)
	got, err := Recover(o, r)
	if err != nil || got != nil {
		t.Fatalf("Recover of an empty run folder = %+v, %v; want nil, nil", got, err)
	}
	// Only an output file: the agent wrote its message.
	if err := os.WriteFile(OutputFile(r.RunDir), []byte(`{"status":"retry","summary":"half"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = Recover(o, r)
	if err != nil || got == nil || got.Class != ClassOK || got.Message.Summary != "half" || got.MessageSource != SourceOutputFile {
		t.Fatalf("Recover = %+v, %v; want the output file's message", got, err)
	}
}

// TestRecoverRefusesAFIFO: a FIFO the agent put in place of a run file is
// refused at once instead of blocking the resuming runner.
func TestRecoverRefusesAFIFO(t *testing.T) {
	o, r := setupCLI(t, PresetCodex, `{}`)
	if err := syscall.Mkfifo(filepath.Join(r.RunDir, EventsFileName), 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Recover(o, r)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("Recover error = %v, want a refusal of the FIFO", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Recover blocked on a FIFO")
	}
}
