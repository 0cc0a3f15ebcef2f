package git

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestInTheWayNamesWhatAMoveWouldReplace: a commit that adds .env and the
// file localdata, and a/b/c.txt, met by the person's ignored .env, an
// ignored folder localdata/ and an untracked file a/b (where a folder
// goes); the tracked and unrelated files are not named. KeepFiles keeps
// them whole, and git's own move then replaces them, as it would
// unasked.
func TestInTheWayNamesWhatAMoveWouldReplace(t *testing.T) {
	s := newScratch(t)
	s.write(".gitignore", "*.log\nbuild/\n.env\nlocaldata/\n")
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "ignore")
	from := s.git("rev-parse", "HEAD")
	to := s.commitAside(from, map[string]string{".env": "KEY=from the task\n", "localdata": "a file now\n", "a/b/c.txt": "deep\n", "README": "changed\n"})

	s.write(".env", "KEY=the person's real key\n")
	s.write("localdata/cache.db", "the person's data\n")
	s.write("a/b", "an untracked file where a folder goes\n")
	s.write("build/app", "ignored, not in the way\n")
	s.write("notes.txt", "untracked, not in the way\n")

	got, err := s.r.InTheWay(ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".env", "a/b", "localdata"}; !slices.Equal(got, want) {
		t.Fatalf("in the way: %q, want %q", got, want)
	}
	kept, err := s.r.KeepFiles(ctx, "test", from, got, Message{Subject: "kept"})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{".env": "KEY=the person's real key\n", "localdata/cache.db": "the person's data\n", "a/b": "an untracked file where a folder goes\n", "README": "hello\n"} {
		if got := s.git("show", kept+":"+path) + "\n"; got != want {
			t.Errorf("kept %s: %q, want %q", path, got, want)
		}
	}
	if ref := s.git("rev-parse", KeptPrefix+"test"); ref != kept {
		t.Errorf("%stest is %s, want %s", KeptPrefix, ref, kept)
	}
	if files := s.treeFiles(kept); slices.Contains(files, "build/app") || slices.Contains(files, "notes.txt") {
		t.Errorf("the kept commit holds more than what was in the way: %q", files)
	}

	// Git refuses to overwrite the untracked file; the ignored ones it
	// replaces.
	os.Remove(filepath.Join(s.dir, "a", "b"))
	if err := s.r.Follow(ctx, from, to); err != nil {
		t.Fatal(err)
	}
	if got := s.read(".env"); got != "KEY=from the task\n" {
		t.Fatalf("after the move .env holds %q: git's move no longer replaces an ignored file, and InTheWay's reason is gone", got)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "localdata", "cache.db")); err == nil {
		t.Fatal("git's move kept the ignored folder localdata/")
	}
}

// TestInTheWayNothing: a move that meets nothing untracked names nothing,
// and a file from tracks that to replaces by a folder is not named.
func TestInTheWayNothing(t *testing.T) {
	s := newScratch(t)
	a, b := twoCommits(s)
	if got, err := s.r.InTheWay(ctx, a, b); err != nil || got != nil {
		t.Fatalf("in the way: %q, %v; want nothing", got, err)
	}
	// c replaces x.txt, a file a tracks, by a folder.
	s.git("rm", "-q", "x.txt")
	s.write("x.txt/inner", "a folder now\n")
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "c")
	c := s.git("rev-parse", "HEAD")
	s.git("reset", "-q", "--hard", a)
	if got, err := s.r.InTheWay(ctx, a, c); err != nil || got != nil {
		t.Fatalf("in the way from a to c: %q, %v; want nothing", got, err)
	}
}
