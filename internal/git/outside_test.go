package git

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestOutside: the ignored files and folders (a folder once, not walked)
// and the repositories of their own, minus the runner's paths; untracked
// files, which a snapshot takes, are not outside.
func TestOutside(t *testing.T) {
	s := newScratch(t)
	s.write("build/out/a.o", "x")
	s.write("src/run.log", "x") // src/ holds only ignored files: listed as one
	s.write("docs/a.log", "x")
	s.write("docs/index.md", "untracked")
	s.write("notes.txt", "untracked, taken by a snapshot")
	s.write(".runner/runs/000001/meta.json", "{}")
	if err := os.MkdirAll(filepath.Join(s.dir, "vendor/lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.git("-C", "vendor/lib", "init", "-q")
	s.write("vendor/lib/x.go", "package lib")
	got, err := s.r.Outside(context.Background(), []string{".runner/"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"build/", "docs/a.log", "src/", "vendor/lib/"}; !slices.Equal(got, want) {
		t.Errorf("Outside = %q, want %q", got, want)
	}
}
