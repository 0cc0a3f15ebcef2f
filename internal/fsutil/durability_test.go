package fsutil

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReplaceFileEveryDurability(t *testing.T) {
	for _, d := range []Durability{Durable, FileSynced, NotSynced} {
		t.Run(map[Durability]string{Durable: "durable", FileSynced: "file synced", NotSynced: "not synced"}[d], func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			for _, content := range []string{"first\n", "second, longer\n", "3\n"} {
				if err := ReplaceFile(path, []byte(content), 0o600, d); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(path)
				if err != nil || string(got) != content {
					t.Fatalf("after writing %q: read %q, %v", content, got, err)
				}
			}
			st, err := os.Stat(path)
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, %v; want 0600", st.Mode(), err)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("the folder holds %d entries, want only the file (no temporary file left)", len(entries))
			}
		})
	}
	if err := ReplaceFile(filepath.Join(t.TempDir(), "missing", "x"), []byte("x"), 0o644, NotSynced); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("write into a missing folder: %v", err)
	}
}

func TestAppendLineAs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	if err := os.WriteFile(path, []byte("line 1\ntorn"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AppendLineAs(path, []byte("line 2\n"), NotSynced); err != nil {
		t.Fatal(err)
	}
	if err := AppendLineAs(path, []byte("line 3\n"), Durable); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "line 1\nline 2\nline 3\n" {
		t.Errorf("journal %q", got)
	}
	if err := AppendLineAs(path, []byte("no newline"), NotSynced); err == nil {
		t.Error("a line without its newline was appended")
	}
}

func TestReadLimitedInto(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small := write("small", "hello")
	big := write("big", strings.Repeat("x", 10_000))
	buf := make([]byte, 0, 64)
	data, err := ReadLimitedInto(buf, small, 100, true)
	if err != nil || string(data) != "hello" {
		t.Fatalf("read %q, %v", data, err)
	}
	if &data[:1][0] != &buf[:1][0] {
		t.Error("a buffer large enough was not reused")
	}
	data, err = ReadLimitedInto(buf, big, 20_000, true)
	if err != nil || len(data) != 10_000 {
		t.Fatalf("read %d bytes, %v", len(data), err)
	}
	if cap(data) != 10_001+10_001/8 {
		t.Errorf("read into a buffer of %d bytes, want one sized from the file with room to grow (11251)", cap(data))
	}
	if exact, _ := ReadLimited(big, 20_000, true); cap(exact) != 10_001 {
		t.Errorf("ReadLimited read into a buffer of %d bytes, want one sized from the file (10001)", cap(exact))
	}
	if _, err := ReadLimitedInto(data, big, 9_999, true); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a file over the limit: %v", err)
	}
	bad := write("bad", "ok\n\xff")
	if _, err := ReadLimitedInto(nil, bad, 100, true); err == nil || !strings.Contains(err.Error(), "line 2, column 1: invalid UTF-8") {
		t.Errorf("invalid UTF-8: %v", err)
	}
	if data, err := ReadLimitedInto(nil, bad, 100, false); err != nil || !bytes.Equal(data, []byte("ok\n\xff")) {
		t.Errorf("binary read: %q, %v", data, err)
	}
	// A file that is not regular has no size to go by.
	if data, err := ReadLimitedInto(nil, "/proc/self/stat", 1<<20, true); err == nil && len(data) == 0 {
		t.Error("read nothing from /proc/self/stat")
	}
}

// TestPrepareReplace checks both halves of a split replacement: until
// Commit the file keeps its old content (the new one waits in a temporary
// file), Commit gives it the new content, Abort leaves the old one and no
// temporary file.
func TestPrepareReplace(t *testing.T) {
	for _, commit := range []bool{true, false} {
		t.Run(map[bool]string{true: "commit", false: "abort"}[commit], func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "tree.json")
			if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := PrepareReplace(path, []byte("new\n"), 0o640)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); string(got) != "old\n" {
				t.Fatalf("before Commit the file holds %q, want the old content", got)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 2 {
				t.Fatalf("before Commit the folder holds %d files, want the file and its temporary file", len(entries))
			}
			want := "old\n"
			if commit {
				if err := rep.Commit(Durable); err != nil {
					t.Fatal(err)
				}
				want = "new\n"
			} else {
				rep.Abort()
			}
			if got, _ := os.ReadFile(path); string(got) != want {
				t.Errorf("file holds %q, want %q", got, want)
			}
			if left, err := RemoveTemps(dir); err != nil || len(left) != 0 {
				t.Errorf("temporary files left: %v (%v)", left, err)
			}
			if st, err := os.Stat(path); err == nil && commit && st.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want 0640", st.Mode().Perm())
			}
		})
	}
}

// TestSyncFile checks that SyncFile syncs an existing file and accepts a
// missing one.
func TestSyncFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "journal.jsonl")
	if err := SyncFile(path); err != nil {
		t.Errorf("missing file: %v, want nil", err)
	}
	if err := os.WriteFile(path, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SyncFile(path); err != nil {
		t.Errorf("existing file: %v", err)
	}
	if err := SyncFile(filepath.Join(dir, "missing-dir", "f", "g")); err != nil {
		t.Errorf("missing folder: %v, want nil", err)
	}
}
