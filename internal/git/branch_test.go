package git

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnsureBranchCreatesThenReuses(t *testing.T) {
	s := newScratch(t)
	head := s.git("rev-parse", "HEAD")

	id, created, err := s.r.EnsureBranch(ctx, "runner/root", "")
	if err != nil || !created || id != head {
		t.Fatalf("EnsureBranch = %s, %v, %v; want %s, created", id, created, err, head)
	}
	// The run branch moves on; the person's branch moves too (they
	// committed meanwhile): neither is changed by a second EnsureBranch.
	s.git("checkout", "-q", "runner/root")
	s.write("task.txt", "done\n")
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "task")
	runTip := s.git("rev-parse", "HEAD")
	s.git("checkout", "-q", "main")

	id, created, err = s.r.EnsureBranch(ctx, "runner/root", "")
	if err != nil || created || id != runTip {
		t.Errorf("EnsureBranch again = %s, %v, %v; want %s, reused", id, created, err, runTip)
	}
	if got := s.git("rev-parse", "main"); got != head {
		t.Errorf("main moved to %s", got)
	}

	// From another commit.
	id, created, err = s.r.EnsureBranch(ctx, "other", runTip)
	if err != nil || !created || id != runTip {
		t.Errorf("EnsureBranch from %s = %s, %v, %v", runTip, id, created, err)
	}
	if _, _, err := s.r.EnsureBranch(ctx, "bad..name", ""); err == nil {
		t.Error("EnsureBranch accepted an invalid name")
	}
	if _, _, err := s.r.EnsureBranch(ctx, "x", "no-such-rev"); !errors.Is(err, ErrNotFound) {
		t.Errorf("EnsureBranch from a missing revision = %v", err)
	}
	s.fsck()
}

func TestSwitchBranchKeepsThePersonsBranch(t *testing.T) {
	s := newScratch(t)
	head := s.git("rev-parse", "HEAD")
	if _, _, err := s.r.EnsureBranch(ctx, "runner/root", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.r.SwitchBranch(ctx, "runner/root"); err != nil {
		t.Fatal(err)
	}
	if b, err := s.r.CurrentBranch(ctx); err != nil || b != "runner/root" {
		t.Errorf("CurrentBranch = %q, %v", b, err)
	}
	// A commit on the run branch leaves main where it was.
	s.write("a.txt", "a\n")
	snap, err := s.r.Snapshot(ctx, "", runtime)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.r.Commit(ctx, snap.Tree, head, Message{Subject: "task a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.r.AdvanceHead(ctx, snap, c, head); err != nil {
		t.Fatal(err)
	}
	if cs, err := s.r.Changes(ctx, runtime); err != nil || len(cs) != 0 {
		t.Errorf("Changes after AdvanceHead = %q, %v; want none", paths(cs), err)
	}
	if got := s.git("rev-parse", "main"); got != head {
		t.Errorf("main moved to %s", got)
	}
	if got, _ := s.r.HeadCommit(ctx); got != c {
		t.Errorf("HEAD = %s, want the run branch's %s", got, c)
	}
	if err := s.r.SwitchBranch(ctx, "missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("SwitchBranch to a missing branch = %v", err)
	}
	// A file of the branch's name is no pathspec.
	s.write("main", "x\n")
	if err := s.r.SwitchBranch(ctx, "main"); err != nil {
		t.Errorf("SwitchBranch with a file of the same name: %v", err)
	}
}

func TestUnbornRepository(t *testing.T) {
	s := newEmptyScratch(t)
	if _, err := s.r.HeadCommit(ctx); !errors.Is(err, ErrUnborn) {
		t.Errorf("HeadCommit = %v, want ErrUnborn", err)
	}
	if _, _, err := s.r.EnsureBranch(ctx, "runner/root", ""); !errors.Is(err, ErrUnborn) {
		t.Errorf("EnsureBranch = %v, want ErrUnborn", err)
	}
	if b, err := s.r.CurrentBranch(ctx); err != nil || b != "main" {
		t.Errorf("CurrentBranch = %q, %v", b, err)
	}
	s.write("a.txt", "a\n")
	cs, err := s.r.Changes(ctx, runtime)
	if err != nil || len(cs) != 1 || cs[0].Path != "a.txt" {
		t.Errorf("Changes = %q, %v", paths(cs), err)
	}
	// A snapshot of an unborn working tree holds its files; committing it
	// makes a root commit.
	snap, err := s.r.Snapshot(ctx, "", runtime)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Base != "" || strings.Join(s.treeFiles(snap.Tree), ",") != "a.txt" {
		t.Errorf("Snapshot = %+v, files %q", snap, s.treeFiles(snap.Tree))
	}
	c, err := s.r.Commit(ctx, snap.Tree, "", Message{Subject: "root"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.git("rev-list", "--count", c); got != "1" {
		t.Errorf("root commit has %s commits", got)
	}
}

func TestUpdateRefIsACompareAndSwap(t *testing.T) {
	s := newScratch(t)
	a := s.git("rev-parse", "HEAD")
	s.git("commit", "-q", "--allow-empty", "-m", "b")
	b := s.git("rev-parse", "HEAD")
	ref := "refs/runner/test"

	if err := s.r.UpdateRef(ctx, ref, a, ""); err != nil {
		t.Fatal(err)
	}
	err := s.r.UpdateRef(ctx, ref, b, "")
	var rc *RefChangedError
	if !errors.Is(err, ErrRefChanged) || !errors.As(err, &rc) || rc.Actual != a || rc.Expected != "" {
		t.Errorf("create over an existing ref = %v", err)
	}
	err = s.r.UpdateRef(ctx, ref, a, b) // it is at a, not b
	if !errors.As(err, &rc) || rc.Actual != a || rc.Expected != b {
		t.Errorf("update from the wrong value = %v", err)
	}
	if got, _ := s.r.RefValue(ctx, ref); got != a {
		t.Errorf("the failed updates moved the ref to %s", got)
	}
	if err := s.r.UpdateRef(ctx, ref, b, a); err != nil {
		t.Errorf("update from the right value: %v", err)
	}
	if err := s.r.DeleteRef(ctx, ref, a); !errors.Is(err, ErrRefChanged) {
		t.Errorf("delete from the wrong value = %v", err)
	}
	if err := s.r.DeleteRef(ctx, ref, b); err != nil {
		t.Errorf("delete: %v", err)
	}
	if err := s.r.DeleteRef(ctx, ref, ""); err != nil {
		t.Errorf("delete of a missing ref: %v", err)
	}
	if err := s.r.UpdateRef(ctx, ref, a, b); !errors.As(err, &rc) || rc.Actual != "" {
		t.Errorf("update of a missing ref = %v", err)
	}
	for _, bad := range []string{"main", "index", "-d"} {
		if err := s.r.UpdateRef(ctx, bad, a, ""); err == nil || errors.Is(err, ErrRefChanged) {
			t.Errorf("UpdateRef(%q) = %v, want a refusal", bad, err)
		}
	}
	s.fsck()
}

// TestBranchHead: the reader's look at a branch's head, from the checkout
// or a folder in it, "" for a branch that does not exist, an error
// outside any repository and ErrNoGit without git.
func TestBranchHead(t *testing.T) {
	s := newScratch(t)
	s.git("branch", "runner/app")
	s.git("checkout", "-q", "runner/app")
	s.write("task.txt", "done\n")
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "task")
	want := s.git("rev-parse", "HEAD")
	s.git("checkout", "-q", "main")

	o := Options{Env: s.env}
	for _, dir := range []string{s.dir, filepath.Join(s.dir, ".runner")} {
		if got, err := BranchHead(ctx, dir, "runner/app", o); err != nil || got != want {
			t.Errorf("BranchHead from %s = %q, %v; want %s", dir, got, err, want)
		}
	}
	if got, err := BranchHead(ctx, s.dir, "runner/none", o); err != nil || got != "" {
		t.Errorf("BranchHead of a missing branch = %q, %v; want \"\", nil", got, err)
	}
	if got, err := BranchHead(ctx, t.TempDir(), "runner/app", o); err == nil || got != "" {
		t.Errorf("BranchHead outside a repository = %q, %v; want an error", got, err)
	}
	if _, err := BranchHead(ctx, s.dir, "runner/app", Options{Git: filepath.Join(t.TempDir(), "no-git"), Env: s.env}); !errors.Is(err, ErrNoGit) {
		t.Errorf("BranchHead without git: err = %v, want ErrNoGit", err)
	}
}
