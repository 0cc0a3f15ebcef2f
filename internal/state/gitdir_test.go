package state

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGitCommonDirCeiling: the runner finds the repository a folder is in
// as git does, and stops where GIT_CEILING_DIRECTORIES tells git to stop,
// so that a folder below a ceiling is not taken for part of a repository
// above it (a temporary folder on a machine whose / is a git work tree).
func TestGitCommonDirCeiling(t *testing.T) {
	outer := t.TempDir()
	if err := os.Mkdir(filepath.Join(outer, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	ceiling := filepath.Join(outer, "tmp")
	inner := filepath.Join(ceiling, "work", "sub")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}

	t.Setenv("GIT_CEILING_DIRECTORIES", "")
	if dir, ok := GitCommonDir(inner); !ok || dir != filepath.Join(outer, ".git") {
		t.Errorf("without a ceiling: GitCommonDir = %q, %v; want the outer .git", dir, ok)
	}

	t.Setenv("GIT_CEILING_DIRECTORIES", "relative/is/ignored"+string(filepath.ListSeparator)+ceiling)
	if dir, ok := GitCommonDir(inner); ok {
		t.Errorf("below the ceiling %s: GitCommonDir = %q, want no repository", ceiling, dir)
	}

	// A repository below the ceiling is still found.
	if err := os.Mkdir(filepath.Join(ceiling, "work", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if dir, ok := GitCommonDir(inner); !ok || dir != filepath.Join(ceiling, "work", ".git") {
		t.Errorf("repository below the ceiling: GitCommonDir = %q, %v", dir, ok)
	}
}
