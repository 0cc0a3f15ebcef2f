package iteration

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/verify"
)

// room is a working tree with a protected test, a runner folder and an
// iteration's run folder: all an iteration needs, with no ledger and no
// task tree.
type room struct {
	work, runnerDir, runDir string
}

func newRoom(t *testing.T) room {
	t.Helper()
	base := t.TempDir()
	r := room{work: filepath.Join(base, "work"), runnerDir: filepath.Join(base, "runner"), runDir: filepath.Join(base, "runner", "runs", "000003")}
	for _, d := range []string{filepath.Join(r.work, "tests"), filepath.Join(r.runnerDir, "state"), r.runDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(r.work, "tests", "check.sh"), "test -f done.txt\n")
	writeFile(t, filepath.Join(r.runnerDir, "state", "output.schema.json"), executor.OutputSchema)
	writeFile(t, filepath.Join(r.runDir, "prompt.md"), "Do the task.\n")
	return r
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
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

// spec is iteration 3 of task "calc" in the room, its agent the shell
// script, its judges the tests/ folder.
func (r room) spec(t *testing.T, script string) Spec {
	t.Helper()
	globs, err := verify.ParseGlobs([]string{"tests/**"})
	if err != nil {
		t.Fatal(err)
	}
	return Spec{
		Request: executor.Request{
			Root: r.work, RunnerDir: r.runnerDir, RunDir: r.runDir, Iteration: 3, NodeID: "calc",
			Prompt: []byte("Do the task.\n"), PromptFile: filepath.Join(r.runDir, "prompt.md"),
			SchemaFile: filepath.Join(r.runnerDir, "state", "output.schema.json"),
		},
		Executor:  executor.Options{Preset: executor.PresetCommand, Command: []string{"sh", "-c", script}, Grace: time.Second, Timeout: time.Minute},
		Judged:    verify.Judged{Root: r.work, Protect: globs},
		TamperDir: filepath.Join(r.runDir, "tamper"), TamperPrefix: "tamper/",
	}
}

const doneAgent = `echo ok > done.txt; echo '{"status": "done", "summary": "made done.txt"}' > "$RUNNER_OUTPUT_FILE"`

// TestAgentThenGuards runs an iteration's work as a worker would, from
// the spec alone: the agent's run, then the guards on its work.
func TestAgentThenGuards(t *testing.T) {
	r := newRoom(t)
	run, err := RunProgram(context.Background(), r.spec(t, doneAgent))
	if err != nil || run.StartErr != nil {
		t.Fatalf("RunProgram: %v, start: %v", err, run.StartErr)
	}
	res := run.Result
	if res.Class != executor.ClassOK || res.Message == nil || res.Message.Status != "done" || res.Message.Summary != "made done.txt" {
		t.Fatalf("result %+v, message %+v; want ok and done", res, res.Message)
	}
	if len(run.Tamper) != 0 {
		t.Errorf("tamper %+v; the agent changed no judge", run.Tamper)
	}
	g := Guards{Work: r.work, Grace: time.Second, Env: []string{"RUNNER_NODE_ID=calc"}, Guards: []config.Guard{
		{Name: "check", Run: "sh tests/check.sh"},
		{Name: "node", Run: `test "$RUNNER_NODE_ID" = calc`},
	}}
	j, err := Judge(context.Background(), g, r.runDir, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Verdict != state.GuardPass || len(j.Results) != 2 || j.Results[0].Status != state.GuardPass || j.Results[1].Status != state.GuardPass {
		t.Errorf("judgement %+v; want both guards passing", j)
	}
	if log := readFile(t, filepath.Join(r.runDir, "guard.log")); !strings.Contains(log, "check") {
		t.Errorf("guard.log does not name the guard:\n%s", log)
	}
}

// TestJudgeFails: a guard that fails fails the judgement, every guard
// runs, and failure.log holds the failing one's output.
func TestJudgeFails(t *testing.T) {
	r := newRoom(t)
	g := Guards{Work: r.work, Grace: time.Second, Guards: []config.Guard{
		{Name: "check", Run: "echo no done.txt here; sh tests/check.sh"},
		{Name: "second", Run: "true"},
	}}
	j, err := Judge(context.Background(), g, r.runDir, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Verdict != state.GuardFail || len(j.Results) != 2 || j.Results[0].Status != state.GuardFail || j.Results[0].ExitCode != 1 {
		t.Fatalf("judgement %+v; want the first guard failing with exit 1", j)
	}
	if log := readFile(t, filepath.Join(r.runDir, "failure.log")); !strings.Contains(log, "no done.txt here") {
		t.Errorf("failure.log lacks the failing guard's output:\n%s", log)
	}
}

// TestAgentChangesItsJudges is the attack: the agent rewrites the
// protected test to pass. Its version is kept under the tamper folder,
// the original is put back, and the change is reported.
func TestAgentChangesItsJudges(t *testing.T) {
	r := newRoom(t)
	run, err := RunProgram(context.Background(), r.spec(t, `echo 'exit 0' > tests/check.sh; `+doneAgent))
	if err != nil {
		t.Fatal(err)
	}
	want := []state.TamperMeta{{Path: "tests/check.sh", Change: verify.Modified, Kept: "tamper/tests/check.sh"}}
	if len(run.Tamper) != 1 || run.Tamper[0] != want[0] {
		t.Fatalf("tamper %+v; want %+v", run.Tamper, want)
	}
	if got := readFile(t, filepath.Join(r.work, "tests", "check.sh")); got != "test -f done.txt\n" {
		t.Errorf("the protected test is %q; want it put back", got)
	}
	if got := readFile(t, filepath.Join(r.runDir, "tamper", "tests", "check.sh")); got != "exit 0\n" {
		t.Errorf("the agent's version kept is %q", got)
	}
}

// TestHooks: the agent runs inside Outside, and Exited is called once its
// processes are gone and before its judges are checked; an error of
// Exited ends the run with it.
func TestHooks(t *testing.T) {
	r := newRoom(t)
	s := r.spec(t, `echo 'exit 0' > tests/check.sh; `+doneAgent)
	var outside, exited int
	var sawTamper string
	s.Hooks = Hooks{
		Outside: func(f func()) { outside++; f() },
		Exited: func() error {
			exited++
			sawTamper = readFile(t, filepath.Join(r.work, "tests", "check.sh"))
			return nil
		},
	}
	if _, err := RunProgram(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if outside != 1 || exited != 1 {
		t.Errorf("Outside called %d times, Exited %d; want once each", outside, exited)
	}
	if sawTamper != "exit 0\n" {
		t.Errorf("Exited saw the protected test as %q; want it before the judges were put back", sawTamper)
	}
	broken := errors.New("the runner's state is gone")
	s.Hooks.Exited = func() error { return broken }
	if _, err := RunProgram(context.Background(), s); !errors.Is(err, broken) {
		t.Errorf("RunProgram = %v; want the hook's error", err)
	}
}

// TestProgramThatCannotStart: a missing program is a StartErr, not the
// runner's failure; judges that cannot be read are a BeforeStartError.
func TestProgramThatCannotStart(t *testing.T) {
	r := newRoom(t)
	s := r.spec(t, "")
	s.Executor.Command = []string{filepath.Join(r.work, "no-such-agent")}
	run, err := RunProgram(context.Background(), s)
	if err != nil || run.StartErr == nil || run.Result != nil {
		t.Fatalf("RunProgram = %+v, %v; want a StartErr", run, err)
	}
	s = r.spec(t, doneAgent)
	s.Judged.Root = filepath.Join(r.work, "gone")
	s.Judged.RunnerDir = filepath.Join(r.work, "gone", ".runner")
	s.Judged.Inputs = true
	_, err = RunProgram(context.Background(), s)
	var before *BeforeStartError
	if !errors.As(err, &before) {
		t.Fatalf("RunProgram with a runner folder that cannot be read = %v; want a BeforeStartError", err)
	}
	if _, serr := os.Stat(filepath.Join(r.work, "done.txt")); serr == nil {
		t.Errorf("the agent ran although its judges could not be read")
	}
}
