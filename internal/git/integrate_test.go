package git

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// commitOn makes a commit on parent in the checkout, which is left
// detached at it: files written with their content, or removed when it
// is "".
func (s *scratch) commitOn(parent string, files map[string]string) string {
	s.t.Helper()
	s.git("checkout", "-q", "--detach", parent)
	for p, c := range files {
		if c == "" {
			if err := os.Remove(filepath.Join(s.dir, p)); err != nil {
				s.t.Fatal(err)
			}
		} else {
			s.write(p, c)
		}
	}
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "change of "+strings.Join(mapKeys(files), ", "))
	return s.git("rev-parse", "HEAD")
}

func mapKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// numbered is lines "1" to "n", with the lines of edits replaced.
func numbered(n int, edits map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if e, ok := edits[i]; ok {
			b.WriteString(e + "\n")
		} else {
			fmt.Fprintf(&b, "%d\n", i)
		}
	}
	return b.String()
}

// integrateConflict runs Integrate expecting a conflict and returns it.
func integrateConflict(t *testing.T, s *scratch, onto, task string) *ConflictError {
	t.Helper()
	c, err := s.r.Integrate(ctx, onto, task, Message{Subject: "task"})
	var ce *ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, ErrConflict) {
		t.Fatalf("Integrate = %q, %v; want a *ConflictError", c, err)
	}
	if ce.Onto != onto || ce.Task != task {
		t.Errorf("ConflictError commits = %s, %s; want %s, %s", ce.Onto, ce.Task, onto, task)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") {
		t.Errorf("Error() is not one line: %q", msg)
	}
	return ce
}

// A task whose parent is the run head is the new run head itself, with no
// merge computed.
func TestIntegrateFastPath(t *testing.T) {
	s := newScratch(t)
	base := s.git("rev-parse", "HEAD")
	task := s.commitOn(base, map[string]string{"a.go": "package a\n"})
	// The Repo's first call reads the configuration's drivers
	// (drivers.go); later ones, while it does not change, do not.
	if _, _, err := s.r.overrides(ctx); err != nil {
		t.Fatal(err)
	}
	var calls []string
	s.r.x.trace = func(args []string, _ time.Duration) { calls = append(calls, strings.Join(args, " ")) }
	c, err := s.r.Integrate(ctx, base, task, Message{Subject: "not used"})
	if err != nil || c != task {
		t.Fatalf("Integrate = %s, %v; want the task's commit %s", c, err, task)
	}
	if len(calls) != 1 || !strings.HasPrefix(calls[0], "rev-parse ") {
		t.Errorf("git calls = %q; want one rev-parse", calls)
	}
}

// A slot's task lands on a run head that moved with another task's
// unrelated change: one commit on top of it, holding both.
func TestIntegrateCleanReplay(t *testing.T) {
	s := newScratch(t)
	base := s.git("rev-parse", "HEAD")
	slot, _, err := s.r.AddDetachedWorktree(ctx, filepath.Join(t.TempDir(), "slot-1"), base)
	if err != nil {
		t.Fatal(err)
	}
	// Another slot's task landed meanwhile.
	onto := s.commitOn(base, map[string]string{"README": "hello, world\n", "other.go": "package other\n"})
	s.git("branch", "runner/root", onto)

	writeFile(t, filepath.Join(slot.Top(), "lib", "task.go"), "package lib\n")
	writeFile(t, filepath.Join(slot.Top(), ".gitignore"), "*.log\nbuild/\ndist/\n")
	snap, err := slot.Snapshot(ctx, base, runtime)
	if err != nil {
		t.Fatal(err)
	}
	task, err := slot.Commit(ctx, snap.Tree, base, Message{Subject: "task t", Trailers: NodeTrailers("t", 3)})
	if err != nil {
		t.Fatal(err)
	}

	m := Message{Subject: "task t", Body: "what the agent did", Trailers: NodeTrailers("t", 3)}
	c, err := s.r.Integrate(ctx, onto, task, m)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.git("rev-parse", c+"^@"); got != onto {
		t.Errorf("parents of the result = %q, want %s", got, onto)
	}
	if n := s.git("rev-list", "--count", onto+".."+c); n != "1" {
		t.Errorf("%s commits between the run head and the result, want 1", n)
	}
	for path, want := range map[string]string{
		"README": "hello, world\n", "other.go": "package other\n",
		"lib/task.go": "package lib\n", ".gitignore": "*.log\nbuild/\ndist/\n",
	} {
		if got := s.git("show", c+":"+path) + "\n"; got != want {
			t.Errorf("%s in the result = %q, want %q", path, got, want)
		}
	}
	if got := s.git("log", "-1", "--format=%B", c) + "\n"; got != m.String() {
		t.Errorf("message = %q, want %q", got, m.String())
	}
	// No ref moved, no working tree changed.
	if got := s.git("rev-parse", "runner/root"); got != onto {
		t.Errorf("runner/root moved to %s", got)
	}
	if got := s.gitIn(slot.Top(), "rev-parse", "HEAD"); got != base {
		t.Errorf("the slot's HEAD moved to %s", got)
	}
	if s.read("lib/task.go") != "<missing>" {
		t.Error("the checkout got the task's file")
	}
	s.fsck()
}

// Two tasks that edit different parts of one file merge cleanly.
func TestIntegrateSameFileDifferentParts(t *testing.T) {
	s := newScratch(t)
	base := s.commitOn(s.git("rev-parse", "HEAD"), map[string]string{"f.txt": numbered(20, nil)})
	onto := s.commitOn(base, map[string]string{"f.txt": numbered(20, map[int]string{2: "two"})})
	task := s.commitOn(base, map[string]string{"f.txt": numbered(20, map[int]string{18: "eighteen"})})
	c, err := s.r.Integrate(ctx, onto, task, Message{Subject: "task"})
	if err != nil {
		t.Fatal(err)
	}
	want := numbered(20, map[int]string{2: "two", 18: "eighteen"})
	if got := s.git("show", c+":f.txt") + "\n"; got != want {
		t.Errorf("f.txt = %q, want %q", got, want)
	}
}

// Two tasks that edit the same lines conflict: the files are named, the
// regions shown with both sides.
func TestIntegrateConflictingEdits(t *testing.T) {
	s := newScratch(t)
	base := s.commitOn(s.git("rev-parse", "HEAD"), map[string]string{
		"b.txt": numbered(20, nil), "a.txt": numbered(5, nil), "c.txt": numbered(5, nil),
	})
	onto := s.commitOn(base, map[string]string{
		"b.txt": numbered(20, map[int]string{10: "ten by the run branch"}),
		"a.txt": numbered(5, map[int]string{1: "one by the run branch"}),
		"c.txt": numbered(5, map[int]string{1: "one"}),
	})
	task := s.commitOn(base, map[string]string{
		"b.txt": numbered(20, map[int]string{10: "ten by the task"}),
		"a.txt": numbered(5, map[int]string{1: "one by the task"}),
		"c.txt": numbered(5, map[int]string{5: "five"}),
	})
	ce := integrateConflict(t, s, onto, task)
	if !slices.Equal(ce.Files, []string{"a.txt", "b.txt"}) {
		t.Errorf("Files = %q", ce.Files)
	}
	want := "--- a.txt\n<<<<<<< " + onto + "\none by the run branch\n=======\none by the task\n>>>>>>> " + task + "\n2\n3\n4\n" +
		"--- b.txt\n7\n8\n9\n<<<<<<< " + onto + "\nten by the run branch\n=======\nten by the task\n>>>>>>> " + task + "\n11\n12\n13\n"
	if ce.Hunks != want {
		t.Errorf("Hunks =\n%s\nwant\n%s", ce.Hunks, want)
	}
	if msg := ce.Error(); !strings.Contains(msg, "a.txt, b.txt") || !strings.Contains(msg, task[:12]) {
		t.Errorf("Error() = %q", msg)
	}
}

// A file the run branch deleted and the task changed, and a binary file
// both changed: conflicts without text regions, each named with its kind.
func TestIntegrateModifyDeleteAndBinary(t *testing.T) {
	s := newScratch(t)
	base := s.commitOn(s.git("rev-parse", "HEAD"), map[string]string{"g.txt": "g\n", "logo.png": "\x89PNG\x00base"})
	onto := s.commitOn(base, map[string]string{"g.txt": "", "logo.png": "\x89PNG\x00run branch"})
	task := s.commitOn(base, map[string]string{"g.txt": "g changed\n", "logo.png": "\x89PNG\x00task"})
	ce := integrateConflict(t, s, onto, task)
	if !slices.Equal(ce.Files, []string{"g.txt", "logo.png"}) {
		t.Errorf("Files = %q", ce.Files)
	}
	for _, want := range []string{"--- g.txt\nCONFLICT (modify/delete): g.txt deleted in ", "--- logo.png\nCONFLICT (binary): "} {
		if !strings.Contains(ce.Hunks, want) {
			t.Errorf("Hunks lack %q:\n%s", want, ce.Hunks)
		}
	}
	if strings.Contains(ce.Hunks, "<<<<<<<") {
		t.Errorf("Hunks show markers:\n%s", ce.Hunks)
	}
}

// The conflicted text shown is bounded, and says how much more there is.
func TestIntegrateConflictHunksBounded(t *testing.T) {
	s := newScratch(t)
	side := func(who string) string {
		return strings.Repeat("a line written by "+who+"\n", 2000)
	}
	base := s.commitOn(s.git("rev-parse", "HEAD"), map[string]string{"big.txt": "start\n"})
	onto := s.commitOn(base, map[string]string{"big.txt": side("the run branch")})
	task := s.commitOn(base, map[string]string{"big.txt": side("the task")})
	ce := integrateConflict(t, s, onto, task)

	// No line is common to the two sides: the whole file is one region.
	full := "--- big.txt\n<<<<<<< " + onto + "\n" + side("the run branch") + "=======\n" + side("the task") + ">>>>>>> " + task + "\n"
	shown, last, ok := strings.Cut(ce.Hunks, "... ")
	if !ok || !strings.HasSuffix(shown, "\n") || len(shown) > hunksLimit || len(shown) < hunksLimit-100 {
		t.Fatalf("Hunks (%d bytes) are not cut after a line near %d bytes: ...%q", len(ce.Hunks), hunksLimit, ce.Hunks[max(len(ce.Hunks)-100, 0):])
	}
	if want := fmt.Sprintf("%d more bytes\n", len(full)-len(shown)); last != want {
		t.Errorf("Hunks end with %q, want %q", last, want)
	}
	if !strings.HasPrefix(full, shown) {
		t.Error("the Hunks shown are not the start of the whole")
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		limit  int
		want   string
	}{
		{"fits", []string{"ab\n", "cd\n"}, 6, "ab\ncd\n"},
		{"cut after the last whole line", []string{"ab\n", "cd\n", "ef\n"}, 7, "ab\ncd\n... 3 more bytes\n"},
		{"no line end", []string{"abcdef"}, 4, "abcd... 2 more bytes\n"},
		{"not inside a character", []string{"aé"}, 2, "a... 2 more bytes\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &clip{limit: tc.limit}
			for _, w := range tc.writes {
				c.WriteString(w)
			}
			if got := c.String(); got != tc.want {
				t.Errorf("clip = %q, want %q", got, tc.want)
			}
		})
	}
}

// A task whose changes the run head already holds makes no commit.
func TestIntegrateAlreadyThere(t *testing.T) {
	s := newScratch(t)
	base := s.git("rev-parse", "HEAD")
	task := s.commitOn(base, map[string]string{"a.go": "package a\n"})
	onto := s.commitOn(task, map[string]string{"b.go": "package b\n"})
	if c, err := s.r.Integrate(ctx, onto, task, Message{Subject: "again"}); !errors.Is(err, ErrNoChange) {
		t.Errorf("Integrate of a task already on the run head = %q, %v; want ErrNoChange", c, err)
	}
}

func TestIntegrateRefusals(t *testing.T) {
	s := newScratch(t)
	base := s.git("rev-parse", "HEAD")
	task := s.commitOn(base, map[string]string{"a.go": "package a\n"})
	if _, err := s.r.Integrate(ctx, "no-such-branch", task, Message{Subject: "x"}); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no-such-branch") {
		t.Errorf("Integrate onto an unknown revision = %v", err)
	}
	if _, err := s.r.Integrate(ctx, base, "-x", Message{Subject: "x"}); err == nil {
		t.Error("Integrate of an option accepted")
	}
	other := s.commitOn(base, map[string]string{"b.go": "package b\n"})
	s.git("merge", "-q", "--no-edit", task)
	merge := s.git("rev-parse", "HEAD")
	if _, err := s.r.Integrate(ctx, base, merge, Message{Subject: "x"}); err == nil || !strings.Contains(err.Error(), "2 parents") {
		t.Errorf("Integrate of a merge commit = %v", err)
	}
	if _, err := s.r.Integrate(ctx, other, task, Message{}); err == nil || !strings.Contains(err.Error(), "empty subject") {
		t.Errorf("Integrate with an empty subject = %v", err)
	}

	// A task whose parent is not on the run head's history.
	sibling := s.commitOn(base, map[string]string{"sibling.go": "package sibling\n"})
	late := s.commitOn(sibling, map[string]string{"late.go": "package late\n"})
	c, err := s.r.Integrate(ctx, other, late, Message{Subject: "late"})
	if s.r.x.atLeast(2, 40) {
		if err != nil {
			t.Fatal(err)
		}
		if files := s.treeFiles(c); !slices.Contains(files, "late.go") || slices.Contains(files, "sibling.go") {
			t.Errorf("the cherry-picked result has %q", files)
		}
	} else if err == nil || !strings.Contains(err.Error(), "not an ancestor") {
		t.Errorf("Integrate of a task off the run head's history = %q, %v", c, err)
	}

	// Git without merge-tree --write-tree.
	old := *s.r.x
	old.version = [2]int{2, 37}
	r := &Repo{x: &old, top: s.r.top}
	if _, err := r.Integrate(ctx, other, task, Message{Subject: "x"}); err == nil || !strings.Contains(err.Error(), "2.38") {
		t.Errorf("Integrate with git 2.37 = %v", err)
	}
}

// A slot's worktree restarted at the run head's new commit: the last
// task's leftovers are gone, excluded and ignored files stay.
func TestStartDetachedAt(t *testing.T) {
	s := newScratch(t)
	base := s.git("rev-parse", "HEAD")
	path := filepath.Join(t.TempDir(), "slot-1")
	slot, _, err := s.r.AddDetachedWorktree(ctx, path, base)
	if err != nil {
		t.Fatal(err)
	}
	// The previous task: a commit of the agent's own, then changed,
	// staged, untracked, ignored and runtime files.
	writeFile(t, filepath.Join(path, "committed.go"), "package c\n")
	s.gitIn(path, "add", "committed.go")
	s.gitIn(path, "commit", "-q", "-m", "the agent's own commit")
	writeFile(t, filepath.Join(path, "README"), "changed by the last task\n")
	writeFile(t, filepath.Join(path, "staged.go"), "package staged\n")
	s.gitIn(path, "add", "staged.go")
	writeFile(t, filepath.Join(path, "junk", "deep", "x.txt"), "untracked\n")
	writeFile(t, filepath.Join(path, "build", "out.bin"), "ignored\n")
	writeFile(t, filepath.Join(path, ".runner", "state", "run_state.json"), "{\"slot\":1}\n")

	next := s.commitOn(base, map[string]string{"README": "the run head's\n", "next.go": "package next\n"})
	if err := slot.StartDetachedAt(ctx, next, runtime); err != nil {
		t.Fatal(err)
	}
	if got := s.gitIn(path, "rev-parse", "HEAD"); got != next {
		t.Errorf("the slot's HEAD = %s, want %s", got, next)
	}
	if b, err := slot.CurrentBranch(ctx); err != nil || b != "" {
		t.Errorf("the slot is on branch %q (%v), want a detached HEAD", b, err)
	}
	for rel, want := range map[string]string{
		"README":                       "the run head's\n",
		"next.go":                      "package next\n",
		"committed.go":                 "<missing>",
		"staged.go":                    "<missing>",
		"junk/deep/x.txt":              "<missing>",
		"build/out.bin":                "ignored\n",
		".runner/state/run_state.json": "{\"slot\":1}\n",
	} {
		b, err := os.ReadFile(filepath.Join(path, rel))
		got := string(b)
		if os.IsNotExist(err) {
			got = "<missing>"
		}
		if got != want {
			t.Errorf("%s = %q, want %q", rel, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(path, "junk")); !os.IsNotExist(err) {
		t.Errorf("the untracked folder is still there: %v", err)
	}
	if cs, err := slot.Changes(ctx, runtime); err != nil || len(cs) != 0 {
		t.Errorf("the slot's Changes = %q, %v", paths(cs), err)
	}
	if got := s.gitIn(path, "diff", "--cached", "--name-only", next); got != "" {
		t.Errorf("the slot's index differs from %s in %q", next, got)
	}
	// Again: nothing to do, same result.
	if err := slot.StartDetachedAt(ctx, next, runtime); err != nil {
		t.Fatal(err)
	}
	if err := slot.StartDetachedAt(ctx, "no-such-commit", runtime); !errors.Is(err, ErrNotFound) {
		t.Errorf("StartDetachedAt an unknown commit = %v", err)
	}
	s.fsck()
}
