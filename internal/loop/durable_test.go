package loop

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// TestResumeReadsMessageFromMeta checks that an iteration whose results
// are in meta.json is recorded from them when output.json, the copy that
// is not fsynced, was lost: a machine crash may leave it empty.
func TestResumeReadsMessageFromMeta(t *testing.T) {
	p := state.NewPaths(t.TempDir())
	for _, dir := range []string{p.RunDir(1), p.StateDir()} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, p.Config(), testConfig)
	write(t, p.Tree(), testTree)
	msg, _ := json.Marshal(executor.Message{Status: "done", Summary: "did a", Assumptions: []string{"from meta.json"}})
	start := time.Now().UTC().Add(-time.Minute)
	meta := &state.Meta{Iteration: 1, Node: "a", NodePath: "app/a", Attempt: 1, MaxAttempts: 3, Phase: state.PhaseGuardsDone,
		StartedAt: start, Agent: &state.AgentMeta{Class: executor.ClassOK}, AgentStatus: "done", Summary: "did a",
		Guard: state.GuardPass, Message: msg}
	if err := state.SaveMeta(p.RunDir(1), meta); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(p.RunDir(1), "output.json"), "") // lost in a crash
	rs := &state.RunState{InFlight: &state.InFlight{Iteration: 1, Node: "a", Phase: state.PhaseStarted, StartedAt: start}}
	if err := state.SaveRunState(p.RunState(), rs); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{Paths: p, MaxIterations: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != Complete || res.Iterations != 0 {
		t.Errorf("run ended with %+v, want the tree complete after recording the resumed iteration", res)
	}
	tr, err := tree.Load(p.Tree())
	if err != nil {
		t.Fatal(err)
	}
	if a := tr.Root.Children[0]; a.Status != tree.StatusDone || a.Attempts != 0 {
		t.Errorf("node a: %+v, want done without an attempt spent", a)
	}
	notes, _ := os.ReadFile(p.Assumptions())
	if !strings.Contains(string(notes), "[iteration 1, node a] from meta.json") {
		t.Errorf("assumptions.md = %q, want the message's assumption", notes)
	}
	m, err := state.LoadMeta(p.RunDir(1))
	if err != nil || m.Phase != state.PhaseRecorded || m.Outcome != state.OutcomeDone {
		t.Errorf("meta.json after recording: %+v, %v", m, err)
	}
}

// TestMetaWrittenOnceAgentIsDone checks the writes of an iteration without
// guards: no meta.json while the agent works, then one holding the
// outcome and the agent's message, and no temporary file left.
func TestMetaWrittenOnceAgentIsDone(t *testing.T) {
	p := stateRepo(t)
	// The agent records whether meta.json existed while it ran.
	write(t, p.Config(), `[executor]
preset = "command"
command = ["sh", "-c", "cat > /dev/null; if [ -e \"$RUNNER_DIR/runs/000001/meta.json\" ]; then s=present; else s=absent; fi; echo \"{\\\"status\\\": \\\"done\\\", \\\"summary\\\": \\\"meta.json was $s\\\"}\""]
`)
	write(t, p.Tree(), testTree)
	if _, err := Run(context.Background(), Options{Paths: p, MaxIterations: 1}); err != nil {
		t.Fatal(err)
	}
	m, err := state.LoadMeta(p.RunDir(1))
	if err != nil {
		t.Fatal(err)
	}
	if m.Summary != "meta.json was absent" {
		t.Errorf("summary %q: meta.json existed while the agent ran", m.Summary)
	}
	if m.Phase != state.PhaseRecorded || m.Outcome != state.OutcomeDone || m.Prompt.Bytes == 0 {
		t.Errorf("meta.json: %+v", m)
	}
	var got executor.Message
	if err := json.Unmarshal(m.Message, &got); err != nil || got.Summary != m.Summary {
		t.Errorf("meta.json message %s: %v", m.Message, err)
	}
	filepath.WalkDir(p.Dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", path)
		}
		return nil
	})
}
