package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	confining(t)
	ctx := context.Background()
	src, remote, checkpoint := checkpointRepo(t)
	outside := filepath.Join(t.TempDir(), "escaped")
	gitIn(t, src, "push", "-q", remote, "HEAD:refs/runner/engine/r/1.0/checkpoint")

	w := &Worker{Dir: t.TempDir(), Name: "w", Room: func(_ *config.Config, work, tmp string) *sandbox.Room {
		return sandbox.ToolRoom(work, tmp, nil, nil)
	}}
	var err error
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

	// A setup that fails on it says why, from its log, which goes with
	// the iteration's run folder.
	it = &iterationRun{in: in, cfg: &config.Config{Git: config.Git{Setup: []string{"touch " + outside}}}, phase: func(string) {}}
	err = w.checkout(ctx, "wf2", it)
	defer w.tidy("wf2", it)
	if err == nil || !strings.Contains(err.Error(), "git.setup: ") || !strings.Contains(err.Error(), "| $ touch "+outside+" | touch: cannot touch") {
		t.Errorf("a setup writing outside the room: %v; want it failed, saying why", err)
	}
}

// checkpointRepo makes a repository holding one commit and a bare
// remote beside it (git is needed): the repository, the remote and the
// commit.
func checkpointRepo(t *testing.T) (src, remote, checkpoint string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	src, remote = t.TempDir(), filepath.Join(t.TempDir(), "remote.git")
	gitIn(t, src, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("a\n"), 0o644)
	gitIn(t, src, "add", "-A")
	gitIn(t, src, "commit", "-qm", "a")
	gitIn(t, src, "init", "-q", "--bare", remote)
	return src, remote, gitIn(t, src, "rev-parse", "HEAD")
}

// confining makes the test binary the helper that confines the commands
// the test's worker starts, until the test ends; it skips where the
// kernel has no Landlock.
func confining(t *testing.T) {
	t.Helper()
	if abi, err := sandbox.ABI(); abi < 1 {
		t.Skipf("no Landlock here: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	proc.UseConfinement(exe)
	t.Cleanup(func() { proc.UseConfinement("") })
}
