package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/sandbox"
)

// TestSetupConfined: a worker runs git.setup in the room its Room gives
// the iteration: the setup writes the iteration's worktree, and what it
// tries outside is refused.
func TestSetupConfined(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	if abi, err := sandbox.ABI(); abi < 1 {
		t.Skipf("no Landlock here: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	proc.UseConfinement(exe)
	defer proc.UseConfinement("")
	ctx := context.Background()
	src, remote, outside := t.TempDir(), filepath.Join(t.TempDir(), "remote.git"), filepath.Join(t.TempDir(), "escaped")
	gitIn(t, src, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("a\n"), 0o644)
	gitIn(t, src, "add", "-A")
	gitIn(t, src, "commit", "-qm", "a")
	checkpoint := gitIn(t, src, "rev-parse", "HEAD")
	gitIn(t, src, "init", "-q", "--bare", remote)
	gitIn(t, src, "push", "-q", remote, "HEAD:refs/runner/engine/r/1.0/checkpoint")

	w := &Worker{Dir: t.TempDir(), Name: "w", Room: func(_ *config.Config, work, tmp string) *sandbox.Room {
		return sandbox.ToolRoom(work, tmp, nil, nil)
	}}
	if w.repo, err = git.Init(ctx, filepath.Join(w.Dir, "repo"), git.Options{}); err != nil {
		t.Fatal(err)
	}
	in := Input{Run: "r", Iteration: 1, Node: "a", Remote: remote, Checkpoint: checkpoint, CheckpointRef: "refs/runner/engine/r/1.0/checkpoint"}
	cfg := &config.Config{Git: config.Git{Setup: []string{"touch installed && (touch " + outside + " || touch refused)"}}}
	it := &iterationRun{in: in, cfg: cfg, phase: func(string) {}}
	if err := w.checkout(ctx, "wf", it); err != nil {
		t.Fatal(err)
	}
	defer w.tidy("wf", it)
	for _, name := range []string{"installed", "refused"} {
		if _, err := os.Stat(filepath.Join(it.work, name)); err != nil {
			t.Errorf("the setup's %s: %v", name, err)
		}
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("the setup wrote outside the iteration's room")
	}
}
