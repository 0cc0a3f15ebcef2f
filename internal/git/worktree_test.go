package git

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/sandbox"
)

func TestWorktreeAddReuseRemove(t *testing.T) {
	s := newScratch(t)
	s.write("work-in-progress.txt", "the person's uncommitted file\n")
	s.write("README", "the person's uncommitted change\n")
	head := s.git("rev-parse", "HEAD")
	indexBefore := s.indexState()
	if _, _, err := s.r.EnsureBranch(ctx, "runner/root", ""); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "wts", "root")

	w, created, err := s.r.AddWorktree(ctx, path, "runner/root")
	if err != nil || !created {
		t.Fatalf("AddWorktree = %v, %v", created, err)
	}
	if want, _ := filepath.EvalSymlinks(path); w.Top() != want {
		t.Errorf("worktree Top = %s, want %s", w.Top(), want)
	}
	if w.CommonDir() != s.r.CommonDir() || w.GitDir() == s.r.GitDir() {
		t.Errorf("worktree git dirs = %s, %s", w.GitDir(), w.CommonDir())
	}
	if b, _ := os.ReadFile(filepath.Join(path, "README")); string(b) != "hello\n" {
		t.Errorf("README in the worktree = %q", b)
	}

	// Work and a commit in the worktree leave the checkout as it was.
	writeFile(t, filepath.Join(path, "task.go"), "package task\n")
	snap, err := w.Snapshot(ctx, "", runtime)
	if err != nil {
		t.Fatal(err)
	}
	c, err := w.Commit(ctx, snap.Tree, head, Message{Subject: "task", Trailers: NodeTrailers("t", 1)})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AdvanceHead(ctx, snap, c, head); err != nil {
		t.Fatal(err)
	}
	if got := s.git("rev-parse", "runner/root"); got != c {
		t.Errorf("runner/root = %s, want %s", got, c)
	}
	if cs, err := w.Changes(ctx, runtime); err != nil || len(cs) != 0 {
		t.Errorf("worktree Changes = %q, %v", paths(cs), err)
	}
	if b, _ := s.r.CurrentBranch(ctx); b != "main" {
		t.Errorf("the checkout is on %q", b)
	}
	if got := s.git("rev-parse", "HEAD"); got != head {
		t.Errorf("the checkout's HEAD moved to %s", got)
	}
	if s.indexState() != indexBefore || s.read("README") != "the person's uncommitted change\n" || s.read("task.go") != "<missing>" {
		t.Error("the checkout's index or files changed")
	}

	// Reused, not re-created.
	w2, created, err := s.r.AddWorktree(ctx, path, "runner/root")
	if err != nil || created || w2.Top() != w.Top() {
		t.Errorf("AddWorktree again = %v, %v", created, err)
	}
	// Not on another branch.
	if _, _, err := s.r.EnsureBranch(ctx, "other", ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.r.AddWorktree(ctx, path, "other"); err == nil || !strings.Contains(err.Error(), "runner/root") {
		t.Errorf("AddWorktree on another branch = %v", err)
	}
	// Nor where something else is.
	elsewhere := t.TempDir()
	writeFile(t, filepath.Join(elsewhere, "x"), "x")
	if _, _, err := s.r.AddWorktree(ctx, elsewhere, "other"); err == nil {
		t.Error("AddWorktree over a folder that is not a worktree succeeded")
	}
	// Nor a branch checked out elsewhere.
	if _, _, err := s.r.AddWorktree(ctx, filepath.Join(t.TempDir(), "x"), "main"); err == nil {
		t.Error("AddWorktree of the checkout's branch succeeded")
	}

	wts, err := s.r.ListWorktrees(ctx)
	if err != nil || len(wts) != 2 || wts[1].Branch != "runner/root" || wts[1].Head != c || wts[0].Branch != "main" {
		t.Errorf("ListWorktrees = %+v, %v", wts, err)
	}

	// Changes in the worktree: git refuses to remove it unless forced.
	writeFile(t, filepath.Join(path, "scratch.txt"), "x")
	if err := s.r.RemoveWorktree(ctx, path, false); err == nil {
		t.Error("RemoveWorktree of a worktree with untracked files succeeded without force")
	}
	if err := s.r.RemoveWorktree(ctx, path, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the worktree's folder is still there: %v", err)
	}
	if wts, _ := s.r.ListWorktrees(ctx); len(wts) != 1 {
		t.Errorf("ListWorktrees after removal = %+v", wts)
	}
	if err := s.r.RemoveWorktree(ctx, path, false); err == nil {
		t.Error("RemoveWorktree of a removed worktree succeeded")
	}
	s.fsck()
}

// A worktree whose folder was deleted by hand is made again.
func TestWorktreeWhoseFolderWasDeleted(t *testing.T) {
	s := newScratch(t)
	s.r.EnsureBranch(ctx, "runner/root", "")
	path := filepath.Join(t.TempDir(), "root")
	if _, _, err := s.r.AddWorktree(ctx, path, "runner/root"); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	w, created, err := s.r.AddWorktree(ctx, path, "runner/root")
	if err != nil || !created {
		t.Fatalf("AddWorktree after the folder was deleted = %v, %v", created, err)
	}
	if b, err := w.CurrentBranch(ctx); err != nil || b != "runner/root" {
		t.Errorf("CurrentBranch = %q, %v", b, err)
	}
}

// N tasks at once: N detached worktrees on the same checkpoint, each
// committing on its own.
func TestSeveralDetachedWorktrees(t *testing.T) {
	s := newScratch(t)
	head := s.git("rev-parse", "HEAD")
	base := t.TempDir()
	var ws []*Repo
	for i, name := range []string{"slot-1", "slot-2", "slot-3"} {
		w, created, err := s.r.AddDetachedWorktree(ctx, filepath.Join(base, name), head)
		if err != nil || !created {
			t.Fatalf("AddDetachedWorktree %d = %v, %v", i, created, err)
		}
		ws = append(ws, w)
	}
	for i, w := range ws {
		writeFile(t, filepath.Join(w.Top(), "slot.txt"), string(rune('1'+i))+"\n")
		snap, err := w.Snapshot(ctx, "", runtime)
		if err != nil {
			t.Fatal(err)
		}
		c, err := w.Commit(ctx, snap.Tree, head, Message{Subject: "slot"})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AdvanceHead(ctx, snap, c, head); err != nil {
			t.Fatal(err)
		}
		if got := s.gitIn(w.Top(), "rev-parse", "HEAD"); got != c {
			t.Errorf("slot %d HEAD = %s, want %s", i, got, c)
		}
	}
	if got := s.git("rev-parse", "HEAD"); got != head {
		t.Errorf("the checkout's HEAD moved to %s", got)
	}
	// Reused only when detached at the same commit.
	if _, created, err := s.r.AddDetachedWorktree(ctx, filepath.Join(base, "slot-1"), head); err == nil || created {
		t.Errorf("AddDetachedWorktree at the old commit = %v, %v; want an error (it moved)", created, err)
	}
	wts, err := s.r.ListWorktrees(ctx)
	if err != nil || len(wts) != 4 || wts[1].Branch != "" {
		t.Errorf("ListWorktrees = %+v, %v", wts, err)
	}
	s.fsck()
}

func TestDefaultWorktreePath(t *testing.T) {
	s := newScratch(t)
	p, err := s.r.DefaultWorktreePath("runner/root node")
	if err != nil {
		t.Fatal(err)
	}
	top := s.r.Top()
	if want := filepath.Join(filepath.Dir(top), filepath.Base(top)+WorktreesSuffix, "runner-root-node"); p != want {
		t.Errorf("DefaultWorktreePath = %s, want %s", p, want)
	}
	// From a linked worktree, the place is still beside the main checkout.
	s.r.EnsureBranch(ctx, "b", "")
	w, _, err := s.r.AddWorktree(ctx, p, "b")
	if err != nil {
		t.Fatal(err)
	}
	if p2, _ := w.DefaultWorktreePath("runner/root node"); p2 != p {
		t.Errorf("DefaultWorktreePath from the worktree = %s, want %s", p2, p)
	}
	for _, bad := range []string{"", ".", ".."} {
		if _, err := s.r.DefaultWorktreePath(bad); err == nil {
			t.Errorf("DefaultWorktreePath(%q) accepted", bad)
		}
	}
}

func TestRunSetupOnce(t *testing.T) {
	t.Setenv(sandbox.EngineKeyVar, "/etc/runner/engine.key") // a secret of the runner's
	s := newScratch(t)
	s.r.EnsureBranch(ctx, "b", "")
	w, _, err := s.r.AddWorktree(ctx, filepath.Join(t.TempDir(), "w"), "b")
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "setup.log")
	cmds := []string{"echo one >> count.txt; echo hello", "echo two >&2"}
	ran, err := w.RunSetup(ctx, cmds, logPath, 0, nil)
	if err != nil || !ran {
		t.Fatalf("RunSetup = %v, %v", ran, err)
	}
	ran, err = w.RunSetup(ctx, cmds, logPath, 0, nil)
	if err != nil || ran {
		t.Errorf("RunSetup again = %v, %v; want nothing run", ran, err)
	}
	if b, _ := os.ReadFile(filepath.Join(w.Top(), "count.txt")); string(b) != "one\n" {
		t.Errorf("count.txt = %q: the setup ran more than once", b)
	}
	log, _ := os.ReadFile(logPath)
	for _, want := range []string{"$ echo one >> count.txt; echo hello\nhello\n", "$ echo two >&2\ntwo\n"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("log %q lacks %q", log, want)
		}
	}

	// A failure stops the setup, says which command and where the log
	// is, and runs everything again next time.
	failing := []string{"echo again >> count.txt", "exit 3", "echo never"}
	if _, err := w.RunSetup(ctx, failing, logPath, 0, nil); err == nil || !strings.Contains(err.Error(), `"exit 3": exit status 3`) || !strings.Contains(err.Error(), logPath) {
		t.Errorf("RunSetup with a failing command = %v", err)
	}
	w.RunSetup(ctx, failing, logPath, 0, nil)
	if b, _ := os.ReadFile(filepath.Join(w.Top(), "count.txt")); string(b) != "one\nagain\nagain\n" {
		t.Errorf("count.txt = %q", b)
	}
	if log, _ := os.ReadFile(logPath); strings.Contains(string(log), "never") {
		t.Error("a command after the failing one ran")
	}
	// The mark is in the worktree's git dir, not among its files.
	if cs, _ := w.Changes(ctx, nil); len(cs) != 1 || cs[0].Path != "count.txt" {
		t.Errorf("worktree Changes = %q", paths(cs))
	}

	// A command that runs too long is stopped.
	if _, err := w.RunSetup(ctx, []string{"sleep 30"}, logPath, 200*time.Millisecond, nil); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("RunSetup of a hanging command = %v", err)
	}

	// The runner's secrets are not in its environment (set above).
	if _, err := w.RunSetup(ctx, []string{"echo key=${" + sandbox.EngineKeyVar + ":-unset}"}, logPath, 0, nil); err != nil {
		t.Fatal(err)
	}
	if log, _ := os.ReadFile(logPath); !strings.Contains(string(log), "\nkey=unset\n") {
		t.Errorf("the setup saw the engine key's variable:\n%s", log)
	}
}
