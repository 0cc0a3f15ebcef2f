package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFileAtomicReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	for _, content := range []string{"first\n", "second, longer content\n", ""} {
		if err := WriteFileAtomic(path, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("content = %q, %v; want %q", got, err, content)
		}
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o640 {
		t.Fatalf("mode = %v, want 0640", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

func TestWriteFileAtomicMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "f")
	if err := WriteFileAtomic(path, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "write ") {
		t.Fatalf("want a write error naming the file, got %v", err)
	}
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{TempPrefix + "tree.json-123", TempPrefix + "run_state.json-9", "tree.json", ".gitignore"} {
		os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644)
	}
	removed, err := RemoveTemps(dir)
	if err != nil || len(removed) != 2 {
		t.Fatalf("RemoveTemps = %v, %v; want the two temporary files", removed, err)
	}
	for _, keep := range []string{"tree.json", ".gitignore"} {
		if _, err := os.Stat(filepath.Join(dir, keep)); err != nil {
			t.Fatalf("%s was removed", keep)
		}
	}
	if removed, err := RemoveTemps(filepath.Join(dir, "missing")); err != nil || removed != nil {
		t.Fatalf("a missing directory is not an error: %v %v", removed, err)
	}
}

func TestReadLimited(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	os.WriteFile(path, []byte("12345"), 0o644)
	if data, err := ReadLimited(path, 5, true); err != nil || string(data) != "12345" {
		t.Fatalf("at the limit: %q, %v", data, err)
	}
	if _, err := ReadLimited(path, 4, true); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the limit: want ErrTooLarge, got %v", err)
	}
	os.WriteFile(path, []byte("ok\nok \xff here"), 0o644)
	_, err := ReadLimited(path, 100, true)
	if err == nil || !strings.Contains(err.Error(), "line 2, column 4: invalid UTF-8") {
		t.Fatalf("want a positioned UTF-8 error, got %v", err)
	}
	if _, err := ReadLimited(path, 100, false); err != nil {
		t.Fatalf("binary read should not check UTF-8: %v", err)
	}
	if _, err := ReadLimited(filepath.Join(dir, "missing"), 10, true); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: want ErrNotExist, got %v", err)
	}
}

func TestLineCol(t *testing.T) {
	data := []byte("ab\ncdé\nf")
	tests := []struct{ off, line, col int }{
		{0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {7, 2, 4}, {8, 3, 1}, {100, 3, 2}, {-1, 1, 1},
	}
	for _, tt := range tests {
		if l, c := LineCol(data, tt.off); l != tt.line || c != tt.col {
			t.Errorf("LineCol(%d) = %d,%d; want %d,%d", tt.off, l, c, tt.line, tt.col)
		}
	}
}

func TestAppendSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	for _, line := range []string{"a\n", "b\n"} {
		if err := AppendSync(path, []byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(path); string(got) != "a\nb\n" {
		t.Fatalf("journal = %q", got)
	}
}

func TestDisplayPath(t *testing.T) {
	wd, _ := os.Getwd()
	if got := DisplayPath(filepath.Join(wd, ".runner", "tree.json")); got != filepath.Join(".runner", "tree.json") {
		t.Errorf("below the working directory: %q", got)
	}
	if got := DisplayPath("/elsewhere/tree.json"); got != "/elsewhere/tree.json" {
		t.Errorf("outside: %q", got)
	}
	if got := DisplayPath("rel/x"); got != "rel/x" {
		t.Errorf("relative: %q", got)
	}
}
