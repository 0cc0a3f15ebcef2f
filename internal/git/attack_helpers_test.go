package git

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The attack tests (attack_test.go) give the repository a hostile
// configuration, as an agent that can write .git would, check that plain
// git does run it (the attack is real), then run every operation the
// runner uses and check that nothing of it ran.

// hostile is a program an agent left for git to run: it records each run
// in a marker file, and prints "tampered" whatever it is given, as a
// filter that changes the content would. It reads nothing: a remote's
// upload-pack would wait for it to answer first.
type hostile struct {
	script, marker string
}

func newHostile(t testing.TB) hostile {
	t.Helper()
	dir := t.TempDir()
	h := hostile{script: filepath.Join(dir, "evil.sh"), marker: filepath.Join(dir, "marker")}
	body := "#!/bin/sh\necho \"$0 $*\" >> '" + h.marker + "'\necho tampered\n"
	if err := os.WriteFile(h.script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return h
}

// ran returns what the marker recorded ("" when the script never ran),
// and removes it.
func (h hostile) ran() string {
	b, _ := os.ReadFile(h.marker)
	os.Remove(h.marker)
	return string(b)
}

// mustNotHaveRun fails the test when the script ran since the last check.
func (h hostile) mustNotHaveRun(t testing.TB, during string) {
	t.Helper()
	if got := h.ran(); got != "" {
		t.Errorf("%s: the agent's program ran:\n%s", during, got)
	}
}

// hooksDir makes a folder of hooks, each of them the script.
func (h hostile) hooksDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"post-checkout", "reference-transaction", "post-index-change", "pre-commit",
		"post-commit", "post-merge", "post-rewrite", "pre-auto-gc", "pre-push"} {
		if err := os.Symlink(h.script, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// plainGit runs git as a person (or the runner before it was hardened)
// would, with env (the scratch's when nil), and ignores how it ends: it
// shows whether the attack is real.
func (s *scratch) plainGit(env []string, args ...string) string {
	s.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = s.dir
	cmd.Env = env
	if env == nil {
		cmd.Env = s.env
	}
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// attackIsReal fails the test unless plain git with env runs the script.
func (s *scratch) attackIsReal(h hostile, env []string, args ...string) {
	s.t.Helper()
	out := s.plainGit(env, args...)
	if h.ran() == "" {
		s.t.Fatalf("plain `git %s` did not run the agent's program, so the test proves nothing: %s", strings.Join(args, " "), out)
	}
}

// everyOperation runs every operation of the runner's over the scratch
// repository, through r (a Repo of its checkout): a task landing in the
// checkout, a failed attempt put back, a run branch in a worktree of its
// own, a slot whose task is integrated and reset, moves, a branch switch,
// and the worktrees removed. Each must succeed; h must never run. The
// files are written as an agent would, through the file system.
func everyOperation(t *testing.T, s *scratch, r *Repo, h hostile) {
	t.Helper()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		h.mustNotHaveRun(t, what)
	}
	wts := t.TempDir()
	_, err := r.Changes(ctx, runtime)
	must("Changes", err)
	head, err := r.HeadCommit(ctx)
	must("HeadCommit", err)
	_, err = r.Identity(ctx)
	must("Identity", err)

	// A task lands in the checkout.
	s.write("landed.txt", "landed in the checkout\n")
	s.write("README", "hello, changed\n")
	snap, err := r.Snapshot(ctx, head, runtime)
	must("Snapshot", err)
	c1, err := r.CommitSnapshot(ctx, snap, Message{Subject: "in place", Trailers: NodeTrailers("n", 1)})
	must("CommitSnapshot", err)
	must("AdvanceHead", r.AdvanceHead(ctx, snap, c1, head))
	_, err = r.FindByTrailers(ctx, "HEAD", 5, map[string]string{TrailerNode: "n"})
	must("FindByTrailers", err)
	_, err = r.DiffStat(ctx, head, c1)
	must("DiffStat", err)
	_, _, err = r.Diff(ctx, head, c1, 0)
	must("Diff", err)
	_, err = r.ChangedPaths(ctx, head, c1)
	must("ChangedPaths", err)
	cs, err := r.Changes(ctx, runtime)
	must("Changes after the commit", err)
	if len(cs) != 0 {
		t.Errorf("Changes after the commit = %q", paths(cs))
	}

	// A failed attempt, kept and put back.
	s.write("landed.txt", "a failed attempt\n")
	s.write("junk.txt", "left by the attempt\n")
	snap, err = r.Snapshot(ctx, c1, runtime)
	must("Snapshot of an attempt", err)
	_, err = r.SaveAttempt(ctx, 1, snap.Tree, c1, Message{Subject: "failed"})
	must("SaveAttempt", err)
	must("ResetWorktree", r.ResetWorktree(ctx, c1, runtime))
	s.wantFiles(map[string]string{"landed.txt": "landed in the checkout\n", "junk.txt": "<missing>"})

	// A run branch in a worktree of its own.
	_, _, err = r.EnsureBranch(ctx, "runner/run", c1)
	must("EnsureBranch", err)
	wtPath := filepath.Join(wts, "run")
	wt, _, err := r.AddWorktree(ctx, wtPath, "runner/run")
	must("AddWorktree", err)
	writeFile(t, filepath.Join(wtPath, "run.txt"), "on the run branch\n")
	snap, err = wt.Snapshot(ctx, "", runtime)
	must("Snapshot in the worktree", err)
	c2, err := wt.CommitSnapshot(ctx, snap, Message{Subject: "run"})
	must("CommitSnapshot in the worktree", err)
	must("AdvanceHead in the worktree", wt.AdvanceHead(ctx, snap, c2, c1))

	// A slot, started at c1, whose task lands on c2.
	slotPath := filepath.Join(wts, "slot")
	slot, _, err := r.AddDetachedWorktree(ctx, slotPath, c1)
	must("AddDetachedWorktree", err)
	writeFile(t, filepath.Join(slotPath, "slot.txt"), "the slot's task\n")
	snap, err = slot.Snapshot(ctx, c1, runtime)
	must("Snapshot in the slot", err)
	task, err := slot.CommitSnapshot(ctx, snap, Message{Subject: "task"})
	must("CommitSnapshot in the slot", err)
	result, err := slot.Integrate(ctx, c2, task, Message{Subject: "task"})
	must("Integrate", err)
	must("ResetFromSnapshot", slot.ResetFromSnapshot(ctx, snap, result, runtime))
	must("UpdateRef", wt.UpdateRef(ctx, BranchRef("runner/run"), result, c2))
	must("Follow", wt.Follow(ctx, c2, result))
	must("StartDetachedAt", slot.StartDetachedAt(ctx, c2, runtime))
	must("MoveDetached", slot.MoveDetached(ctx, c2, result))
	if b, _ := os.ReadFile(filepath.Join(slotPath, "slot.txt")); string(b) != "the slot's task\n" {
		t.Errorf("slot.txt in the slot = %q", b)
	}
	_, _, err = r.DetachedWorktree(ctx, slotPath, result)
	must("DetachedWorktree (reused)", err)
	_, err = r.ListWorktrees(ctx)
	must("ListWorktrees", err)

	// The checkout switches branches and back.
	_, _, err = r.EnsureBranch(ctx, "other", head)
	must("EnsureBranch", err)
	must("SwitchBranch", r.SwitchBranch(ctx, "other"))
	s.wantFiles(map[string]string{"landed.txt": "<missing>"})
	must("SwitchBranch back", r.SwitchBranch(ctx, "main"))
	s.wantFiles(map[string]string{"landed.txt": "landed in the checkout\n"})

	must("RemoveWorktree", r.RemoveWorktree(ctx, wtPath, false))
	must("RemoveWorktree forced", r.RemoveWorktree(ctx, slotPath, true))
}

// noSuchFile reports whether path does not exist.
func noSuchFile(path string) bool {
	_, err := os.Lstat(path)
	return errors.Is(err, os.ErrNotExist)
}
