package git

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// listTree lists the files under dir with their sizes and times.
func listTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		b.WriteString(p + " " + st.Mode().String() + " " + st.ModTime().String() + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// An agent rewrites its worktree's .git file to name a git dir of its own
// making, with a hostile configuration: the runner's calls still use the
// worktree's real git dir, nothing of the fake one runs, and nothing is
// written there.
func TestAWorktreesDotGitFileIsNotFollowed(t *testing.T) {
	s := newScratch(t)
	h := newHostile(t)
	base := s.git("rev-parse", "HEAD")
	path := filepath.Join(t.TempDir(), "slot")
	slot, _, err := s.r.AddDetachedWorktree(ctx, path, base)
	if err != nil {
		t.Fatal(err)
	}
	admin := slot.GitDir()

	// The agent's git dir: a copy of what a worktree's holds, and a
	// repository of its own for objects and refs, with hooks, an
	// fsmonitor and filters.
	fake := filepath.Join(t.TempDir(), "fake")
	s.gitIn(t.TempDir(), "init", "-q", "--bare", fake)
	s.gitIn(fake, "config", "core.fsmonitor", h.script)
	s.gitIn(fake, "config", "core.hooksPath", h.hooksDir(t))
	s.gitIn(fake, "config", "filter.evil.clean", h.script)
	s.gitIn(fake, "config", "filter.evil.smudge", h.script)
	s.gitIn(fake, "config", "filter.evil.required", "true")
	s.gitIn(fake, "config", "core.bare", "false")
	writeFile(t, filepath.Join(fake, "info", "attributes"), "* filter=evil\n")
	writeFile(t, filepath.Join(path, ".git"), "gitdir: "+fake+"\n")
	s.attackIsReal(h, nil, "-C", path, "status")
	before := listTree(t, fake)

	// Through the Repo the runner had, and through one it opens again.
	again, created, err := s.r.DetachedWorktree(ctx, path, base)
	if err != nil || created {
		t.Fatalf("DetachedWorktree = %v, %v", created, err)
	}
	if again.GitDir() != admin || again.CommonDir() != s.r.CommonDir() {
		t.Errorf("the worktree opened again has git dir %s, common dir %s; want %s, %s", again.GitDir(), again.CommonDir(), admin, s.r.CommonDir())
	}
	for i, w := range []*Repo{slot, again} {
		writeFile(t, filepath.Join(path, "task.txt"), strings.Repeat("task ", i+1)+"\n")
		cs, err := w.Changes(ctx, runtime)
		if err != nil || strings.Join(paths(cs), ",") != "?? task.txt" {
			t.Errorf("Changes = %q, %v", paths(cs), err)
		}
		snap, err := w.Snapshot(ctx, base, runtime)
		if err != nil {
			t.Fatal(err)
		}
		task, err := w.CommitSnapshot(ctx, snap, Message{Subject: "task"})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.ResetFromSnapshot(ctx, snap, task, runtime); err != nil {
			t.Fatal(err)
		}
		if err := w.DetachAt(ctx, task); err != nil {
			t.Fatal(err)
		}
		// HEAD moved in the real git dir.
		if b, _ := os.ReadFile(filepath.Join(admin, "HEAD")); strings.TrimSpace(string(b)) != task {
			t.Errorf("HEAD in %s = %q, want %s", admin, b, task)
		}
		if err := w.MoveDetached(ctx, task, base); err != nil {
			t.Fatal(err)
		}
		if err := w.StartDetachedAt(ctx, base, runtime); err != nil {
			t.Fatal(err)
		}
		h.mustNotHaveRun(t, "the runner's calls in the worktree")
	}
	if after := listTree(t, fake); after != before {
		t.Errorf("the agent's git dir changed:\nbefore\n%s\nafter\n%s", before, after)
	}

	// Removing it restores the .git file for git's check, and works.
	if err := s.r.RemoveWorktree(ctx, path, true); err != nil {
		t.Fatal(err)
	}
	h.mustNotHaveRun(t, "RemoveWorktree")
	if !noSuchFile(path) || !noSuchFile(admin) {
		t.Error("the worktree or its git dir is still there")
	}
}

// A git dir that an agent made and recorded as another worktree's (its
// gitdir file naming the same folder) is not taken for the real one.
func TestTwoGitDirsClaimingAWorktree(t *testing.T) {
	s := newScratch(t)
	path := filepath.Join(t.TempDir(), "slot")
	if _, _, err := s.r.AddDetachedWorktree(ctx, path, "HEAD"); err != nil {
		t.Fatal(err)
	}
	claim := filepath.Join(s.r.CommonDir(), "worktrees", "zz-claim")
	writeFile(t, filepath.Join(claim, "gitdir"), filepath.Join(path, ".git")+"\n")
	if _, _, err := s.r.DetachedWorktree(ctx, path, "HEAD"); err == nil || !strings.Contains(err.Error(), "several") {
		t.Errorf("DetachedWorktree with two git dirs claiming it = %v", err)
	}
}
