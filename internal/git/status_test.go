package git

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseStatus(t *testing.T) {
	const h = "0123456789012345678901234567890123456789"
	out := strings.Join([]string{
		"# branch.oid " + h,
		"# branch.head main",
		"1 .M N... 100644 100644 100644 " + h + " " + h + " a file with spaces.go",
		"2 R. N... 100644 100644 100644 " + h + " " + h + " R100 new name.go", "old name.go",
		"2 C. N... 100644 100644 100644 " + h + " " + h + " C75 copy.go", "orig.go",
		"u UU N... 100644 100644 100644 100644 " + h + " " + h + " " + h + " conflict.go",
		"1 D. N... 100644 000000 000000 " + h + " " + h + " gone.go",
		"? dir/untracked\nwith newline",
		"? nested/",
		"! ignored.log",
		"",
	}, "\x00")
	cs, err := parseStatus([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{Path: "a file with spaces.go", X: '.', Y: 'M'},
		{Path: "new name.go", Orig: "old name.go", X: 'R', Y: '.'},
		{Path: "copy.go", Orig: "orig.go", X: 'C', Y: '.'},
		{Path: "conflict.go", X: 'U', Y: 'U'},
		{Path: "gone.go", X: 'D', Y: '.'},
		{Path: "dir/untracked\nwith newline", X: '?', Y: '?'},
		{Path: "nested/", X: '?', Y: '?'},
	}
	if !slices.Equal(cs, want) {
		t.Errorf("changes =\n%q\nwant\n%q", cs, want)
	}
	if s := want[1].String(); s != "R  old name.go -> new name.go" {
		t.Errorf("String = %q", s)
	}

	initial, err := parseStatus([]byte("# branch.oid (initial)\x00# branch.head main\x00"))
	if err != nil || len(initial) != 0 {
		t.Errorf("unborn status = %+v, %v", initial, err)
	}
	for _, bad := range []string{
		"1 .M N... 100644\x00",
		"2 R. N... 100644 100644 100644 " + h + " " + h + " R100 new.go\x00",
		"x what\x00",
		"?\x00",
	} {
		if _, err := parseStatus([]byte(bad)); err == nil {
			t.Errorf("parseStatus(%q) accepted", bad)
		}
	}
}

func TestChanges(t *testing.T) {
	s := newScratch(t)
	s.write("keep.txt", "keep\n")
	s.write("old.txt", "some content that stays the same\n")
	s.write("gone.txt", "gone\n")
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "more")

	s.write("README", "changed\n")  // modified, unstaged
	s.write("keep.txt", "staged\n") // modified, staged
	s.git("add", "keep.txt")
	s.git("mv", "old.txt", "new.txt")                                   // renamed, staged
	if err := os.Remove(filepath.Join(s.dir, "gone.txt")); err != nil { // deleted, unstaged
		t.Fatal(err)
	}
	s.write("src/deep/untracked.go", "package x\n") // untracked, in a new folder
	s.write("debug.log", "ignored\n")               // ignored
	s.write("build/out.bin", "ignored\n")           // in an ignored folder
	s.write(".runner/tree.json", "{\"x\":1}\n")     // the tree: not a runtime file
	s.write(".runner/state/run_state.json", "{}\n") // runtime files
	s.write(".runner/runs/000001/meta.json", "{}\n")
	s.write(".runner/lock", "pid 1\n")
	s.write(".runner/context/goal.md", "goal\n")
	s.gitIn(s.dir, "init", "-q", "vendor/nested") // a repository of its own
	s.write("vendor/nested/file", "x\n")

	cs, err := s.r.Changes(ctx, runtime)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		" D gone.txt",
		" M .runner/tree.json",
		" M README",
		"?? src/deep/untracked.go",
		"?? vendor/nested/",
		"M  keep.txt",
		"R  old.txt -> new.txt",
	}
	if got := paths(cs); !slices.Equal(got, want) {
		t.Errorf("Changes =\n%q\nwant\n%q", got, want)
	}

	// Without excludes, the runtime files not ignored by .runner/.gitignore
	// show; excluding all of .runner/ leaves the person's changes only.
	cs, err = s.r.Changes(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(cs); !slices.Contains(got, "?? .runner/state/run_state.json") || slices.Contains(got, "?? .runner/lock") {
		t.Errorf("Changes without excludes = %q", got)
	}
	cs, err = s.r.Changes(ctx, []string{".runner"})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(cs); len(got) != 6 || slices.Contains(got, " M .runner/tree.json") {
		t.Errorf("Changes excluding .runner = %q", got)
	}
}

func TestChangesOfACleanTree(t *testing.T) {
	s := newScratch(t)
	s.write(".runner/state/run_state.json", "{}\n")
	cs, err := s.r.Changes(ctx, runtime)
	if err != nil || len(cs) != 0 {
		t.Errorf("Changes = %q, %v; want none", paths(cs), err)
	}
}

func TestExcluded(t *testing.T) {
	ex := []string{".runner/state/", ".runner/lock", "./tmp//"}
	for p, want := range map[string]bool{
		".runner/state":        true,
		".runner/state/x.json": true,
		".runner/statefile":    false,
		".runner/lock":         true,
		".runner/lockfile":     false,
		".runner/tree.json":    false,
		"tmp/a":                true,
		"src/tmp/a":            false,
		"nested/":              false,
	} {
		if got := excluded(p, ex); got != want {
			t.Errorf("excluded(%q) = %v", p, got)
		}
	}
	if excluded("anything", []string{"", "/", "."}) {
		t.Error("an exclude naming the whole tree excluded a path")
	}
}

func TestCallerEnvironmentDoesNotLeak(t *testing.T) {
	s := newScratch(t)
	other := newScratch(t)
	env := append(s.env[:len(s.env):len(s.env)],
		"GIT_DIR="+filepath.Join(other.dir, ".git"), "GIT_WORK_TREE="+other.dir,
		"GIT_INDEX_FILE="+filepath.Join(t.TempDir(), "index"), "GIT_LITERAL_PATHSPECS=1", "LC_ALL=fr_FR.UTF-8")
	r, err := Open(ctx, s.dir, Options{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	top, _ := filepath.EvalSymlinks(s.dir)
	if r.Top() != top {
		t.Errorf("Top = %s, want %s: GIT_DIR or GIT_WORK_TREE leaked", r.Top(), top)
	}
	s.write("new.txt", "x\n")
	s.write(".runner/state/run_state.json", "{}\n")
	cs, err := r.Changes(ctx, runtime)
	if err != nil {
		t.Fatal(err)
	}
	// With GIT_LITERAL_PATHSPECS, the :(exclude) magic would be a file name.
	if got := paths(cs); strings.Join(got, ",") != "?? new.txt" {
		t.Errorf("Changes = %q, want only new.txt", got)
	}
}
