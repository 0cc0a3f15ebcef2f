package worksnap

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// tree makes a working tree with a runner folder, a git folder, files in
// folders and a link.
func tree(t *testing.T) string {
	root := t.TempDir()
	write(t, filepath.Join(root, "main.go"), "package main\n")
	write(t, filepath.Join(root, "src", "calc.go"), "package calc\n")
	write(t, filepath.Join(root, "src", "deep", "x.txt"), "x\n")
	write(t, filepath.Join(root, ".runner", "tree.json"), "{}\n")
	write(t, filepath.Join(root, ".git", "HEAD"), "ref\n")
	if err := os.Symlink("main.go", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestRestore: every kind of change is found, kept aside and undone; the
// excluded folders are not looked at; a folder replaced with a link to
// outside the tree is a folder again, and nothing is written outside.
func TestRestore(t *testing.T) {
	root := tree(t)
	keep := filepath.Join(t.TempDir(), "keep")
	snap, err := Take(root, []string{".runner/", ".git"}, filepath.Join(t.TempDir(), "snap"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if changes, err := snap.Changes(); err != nil || len(changes) != 0 {
		t.Fatalf("changes right after the snapshot: %v %v", changes, err)
	}
	outside := t.TempDir()
	write(t, filepath.Join(root, "main.go"), "package main // changed\n")
	write(t, filepath.Join(root, "new.txt"), "added\n")
	write(t, filepath.Join(root, ".runner", "tree.json"), "{\"changed\": true}\n")
	os.RemoveAll(filepath.Join(root, "src"))
	if err := os.Symlink(outside, filepath.Join(root, "src")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(root, "link"))
	os.Symlink("new.txt", filepath.Join(root, "link"))

	changes, err := snap.Restore(keep)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{Path: "link", Change: "modified", Kept: "link.symlink"},
		{Path: "main.go", Change: "modified", Kept: "main.go"},
		{Path: "new.txt", Change: "added", Kept: "new.txt"},
		{Path: "src", Change: "modified", Kept: "src.symlink"},
	}
	if !reflect.DeepEqual(changes, want) {
		t.Fatalf("changes:\n got %+v\nwant %+v", changes, want)
	}
	for p, content := range map[string]string{"main.go": "package main\n", "src/calc.go": "package calc\n", "src/deep/x.txt": "x\n"} {
		if got := read(t, filepath.Join(root, p)); got != content {
			t.Errorf("%s = %q after the restore, want %q", p, got, content)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("the added file is still there: %v", err)
	}
	if target, _ := os.Readlink(filepath.Join(root, "link")); target != "main.go" {
		t.Errorf("link -> %q, want main.go", target)
	}
	if got := read(t, filepath.Join(root, ".runner", "tree.json")); got != "{\"changed\": true}\n" {
		t.Errorf("an excluded file was touched: %q", got)
	}
	if got := read(t, filepath.Join(keep, "main.go")); got != "package main // changed\n" {
		t.Errorf("kept main.go = %q", got)
	}
	if got := read(t, filepath.Join(keep, "src.symlink")); got != outside+"\n" {
		t.Errorf("kept src.symlink = %q", got)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("something was written outside the tree: %v", entries)
	}
	if changes, err := snap.Changes(); err != nil || len(changes) != 0 {
		t.Fatalf("changes after the restore: %v %v", changes, err)
	}
}

// TestLoadAndLimit: a snapshot is found again from its folder (a runner
// resuming after a crash); files past the copy limit are compared by
// size and time and, changed, reported as not put back.
func TestLoadAndLimit(t *testing.T) {
	root := tree(t)
	dir := filepath.Join(t.TempDir(), "snap")
	if _, err := Take(root, []string{".runner", ".git"}, dir, 0); err != nil {
		t.Fatal(err)
	}
	snap, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "main.go"), "package main // longer now\n")
	changes, err := snap.Restore(filepath.Join(t.TempDir(), "keep"))
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].Path != "main.go" || changes[0].Lost == "" {
		t.Fatalf("changes %+v, want main.go modified and lost", changes)
	}
	if _, err := Load(t.TempDir()); !os.IsNotExist(err) {
		t.Errorf("Load of an empty folder: %v, want not exist", err)
	}
	since := snap.Since(time.Now().Add(-time.Hour))
	if len(since) != 3 {
		t.Errorf("Since lists %d files, want 3: %+v", len(since), since)
	}
}
