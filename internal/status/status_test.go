package status

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/state"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// listing is every path under dir.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		out = append(out, path)
		return err
	})
	return out
}

func TestLoadReadsOnly(t *testing.T) {
	p := state.NewPaths(t.TempDir())
	write(t, p.Config(), "[executor]\npreset = \"command\"\ncommand = [\"true\"]\n")
	write(t, p.Tree(), `{"version": 1, "root": {"id": "app", "title": "App", "children": [
  {"id": "a", "title": "A", "status": "done"},
  {"id": "b", "title": "B", "status": "blocked", "blocked_reason": "which port?"},
  {"id": "c", "title": "C", "attempts": 1}
]}}`)
	before := listing(t, p.Dir)
	rep, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if after := listing(t, p.Dir); !slices.Equal(before, after) {
		t.Errorf("Load changed .runner/: before %v, after %v", before, after)
	}
	if rep.Progress != (Progress{Done: 1, Total: 3, Blocked: 1}) {
		t.Errorf("progress = %+v", rep.Progress)
	}
	if rep.Next != "c" || rep.Running != nil || rep.Last != nil {
		t.Errorf("next %q, running %v, last %v: want c, nil, nil", rep.Next, rep.Running, rep.Last)
	}
	if b := rep.Tree.Children[1]; b.Status != "blocked" || b.BlockedReason != "which port?" || b.MaxAttempts != 3 {
		t.Errorf("blocked node = %+v", b)
	}
}

func TestLoadNamesTheBrokenFile(t *testing.T) {
	p := state.NewPaths(t.TempDir())
	write(t, p.Config(), "[executor]\npreset = \"command\"\ncommand = [\"true\"]\n")
	write(t, p.Tree(), `{"version": 1, "root": {"id": "app"`)
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "tree.json") {
		t.Fatalf("Load of a torn tree: err = %v", err)
	}
}

// TestSlotsListEveryIterationInFlight: with parallel slots, the report
// names every iteration under way with its slot, the earliest as Running;
// one the journal says is recorded is not listed, and one only the
// journal knows of is.
func TestSlotsListEveryIterationInFlight(t *testing.T) {
	p := state.NewPaths(t.TempDir())
	write(t, p.Config(), "[executor]\npreset = \"command\"\ncommand = [\"true\"]\n")
	write(t, p.Tree(), `{"version": 1, "root": {"id": "app", "title": "App", "children": [
  {"id": "a", "title": "A"}, {"id": "b", "title": "B"}, {"id": "c", "title": "C"}, {"id": "d", "title": "D"}]}}`)
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	rs := &state.RunState{Version: state.RunStateVersion}
	rs.AddFlight(&state.InFlight{Iteration: 4, Node: "b", Phase: state.PhaseAgentDone, Slot: 2})
	rs.AddFlight(&state.InFlight{Iteration: 3, Node: "a", Phase: state.PhaseStarted, Slot: 1})
	rs.AddFlight(&state.InFlight{Iteration: 5, Node: "c", Phase: state.PhaseStarted, Slot: 3})
	if err := state.SaveRunState(p.RunState(), rs); err != nil {
		t.Fatal(err)
	}
	for _, rec := range []state.Record{
		{Iteration: 3, Node: "a", Event: state.EventStarted, Slot: 1},
		{Iteration: 4, Node: "b", Event: state.EventStarted, Slot: 2},
		{Iteration: 5, Node: "c", Event: state.EventStarted, Slot: 3},
		{Iteration: 5, Node: "c", Event: state.EventRecorded},
		{Iteration: 6, Node: "d", Event: state.EventStarted, Slot: 3},
	} {
		if err := state.AppendJournal(p.Journal(), rec); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range rep.Slots {
		got = append(got, fmt.Sprintf("%d:%s@%d", s.Iteration, s.Node, s.Slot))
	}
	if want := []string{"3:a@1", "4:b@2", "6:d@3"}; !slices.Equal(got, want) {
		t.Errorf("slots %v, want %v", got, want)
	}
	if rep.Running == nil || rep.Running.Iteration != 3 {
		t.Errorf("running %+v, want iteration 3", rep.Running)
	}
}

// TestCheckpointIsTheRunBranchsHead: the checkpoint is the run branch's
// head as git says, not run_state.json's (written lazily while slots
// work); run_state.json's stands when git cannot say (not on PATH) or
// checkpoints are off.
func TestCheckpointIsTheRunBranchsHead(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed:", err)
	}
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	t.Setenv("HOME", t.TempDir())
	gitIn := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=P", "-c", "user.email=p@example.com"}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	p := state.NewPaths(dir)
	write(t, p.Config(), "[executor]\npreset = \"command\"\ncommand = [\"true\"]\n")
	write(t, p.Tree(), `{"version": 1, "root": {"id": "app", "title": "App", "children": [{"id": "a", "title": "A"}]}}`)
	gitIn("init", "-q", "-b", "main")
	gitIn("add", "-A")
	gitIn("commit", "-qm", "the project")
	old := gitIn("rev-parse", "HEAD")
	gitIn("branch", "runner/app")
	gitIn("commit", "-q", "--allow-empty", "-m", "A (a)")
	gitIn("update-ref", "refs/heads/runner/app", "HEAD")
	head := gitIn("rev-parse", "HEAD")
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := state.SaveRunState(p.RunState(), &state.RunState{Version: state.RunStateVersion, Branch: "runner/app", Checkpoint: old}); err != nil {
		t.Fatal(err)
	}
	if rep, err := Load(p); err != nil || rep.Branch != "runner/app" || rep.Checkpoint != head {
		t.Fatalf("Load: branch %q, checkpoint %q, %v; want runner/app at %s (run_state.json says %s)", rep.Branch, rep.Checkpoint, err, head, old)
	}

	path := os.Getenv("PATH")
	t.Setenv("PATH", t.TempDir())
	if rep, err := Load(p); err != nil || rep.Checkpoint != old {
		t.Errorf("Load without git: checkpoint %q, %v; want run_state.json's %s", rep.Checkpoint, err, old)
	}
	t.Setenv("PATH", path)
	write(t, p.Config(), "[executor]\npreset = \"command\"\ncommand = [\"true\"]\n[git]\ncheckpoint = false\n")
	if rep, err := Load(p); err != nil || rep.Checkpoint != old {
		t.Errorf("Load with checkpoints off: checkpoint %q, %v; want run_state.json's %s", rep.Checkpoint, err, old)
	}
}
