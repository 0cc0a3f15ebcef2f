package git

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// commitPhase is the commit phase of an iteration as the loop is meant to
// run it, resumable: look for the task's commit by its trailers first,
// then snapshot, commit and advance the run branch. crash stops it after
// the commit is made, before the branch moves (a runner killed there).
func commitPhase(t *testing.T, r *Repo, checkpoint, node string, iteration int, crash bool) (string, error) {
	t.Helper()
	want := map[string]string{TrailerNode: node, TrailerIteration: strconv.Itoa(iteration)}
	if c, err := r.FindByTrailers(ctx, "HEAD", 50, want); err != nil || c != "" {
		return c, err // committed before the crash
	}
	snap, err := r.Snapshot(ctx, checkpoint, runtime)
	if err != nil {
		return "", err
	}
	c, err := r.Commit(ctx, snap.Tree, checkpoint, Message{Subject: "task " + node, Body: "summary", Trailers: NodeTrailers(node, iteration)})
	if err != nil || crash {
		return c, err
	}
	return c, r.AdvanceHead(ctx, snap, c, checkpoint)
}

// A runner killed around the commit phase commits each task exactly once.
func TestExactlyOnceAcrossACrash(t *testing.T) {
	s := newScratch(t)
	start := s.git("rev-parse", "HEAD")
	if _, _, err := s.r.EnsureBranch(ctx, "runner/root", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.r.SwitchBranch(ctx, "runner/root"); err != nil {
		t.Fatal(err)
	}

	// Task a: killed after the commit, before the branch moved. The
	// commit is left dangling; the resumed phase makes it again (the same
	// object, when within the same second).
	s.write("a.go", "package a\n")
	s.write(".runner/state/run_state.json", "{\"in_flight\":1}\n")
	if _, err := commitPhase(t, s.r, start, "a", 1, true); err != nil {
		t.Fatal(err)
	}
	if got := s.git("rev-parse", "runner/root"); got != start {
		t.Fatalf("the run branch moved before AdvanceHead, to %s", got)
	}
	a, err := commitPhase(t, s.r, start, "a", 1, false)
	if err != nil {
		t.Fatal(err)
	}

	// Task b: killed after the branch moved. The resumed phase finds the
	// commit and makes none.
	s.write("b.go", "package b\n")
	b, err := commitPhase(t, s.r, a, "b", 2, false)
	if err != nil {
		t.Fatal(err)
	}
	again, err := commitPhase(t, s.r, a, "b", 2, false)
	if err != nil || again != b {
		t.Errorf("commit phase after the branch moved = %s, %v; want %s", again, err, b)
	}

	// An iteration that changed nothing commits nothing.
	if _, err := commitPhase(t, s.r, b, "c", 3, false); !errors.Is(err, ErrNoChange) {
		t.Errorf("commit phase of an unchanged tree = %v, want ErrNoChange", err)
	}

	if got := s.git("log", "--format=%(trailers:key=Runner-Node,valueonly)", "runner/root"); strings.Fields(got)[0] != "b" || strings.Count(got, "a") != 1 || strings.Count(got, "b") != 1 {
		t.Errorf("Runner-Node of the run branch's commits:\n%s", got)
	}
	if got := s.git("rev-list", "--count", start+"..runner/root"); got != "2" {
		t.Errorf("%s commits on the run branch, want 2", got)
	}
	if got := s.git("rev-parse", "main"); got != start {
		t.Errorf("main moved to %s", got)
	}
	if got := s.git("ls-tree", "-r", "--name-only", "runner/root"); strings.Contains(got, ".runner/state") {
		t.Errorf("a runtime file was committed:\n%s", got)
	}
	if cs, err := s.r.Changes(ctx, runtime); err != nil || len(cs) != 0 {
		t.Errorf("Changes = %q, %v; want none", paths(cs), err)
	}
	s.fsck()
}
