package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sparse makes a sparse file of size bytes at path (nothing written: it
// takes no disk), or skips where the file system cannot.
func sparse(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Skipf("this file system cannot make a sparse file of %d bytes: %v", size, err)
	}
}

// TestLargeProtectedFileIsNotReadWhole: a 64 GiB sparse file added under
// a protected path, and a protected file replaced by one, are found and
// put back without reading them whole (which would exhaust memory);
// what is kept of the large file is its head. A baseline that would
// hold such a file is refused by its size, before reading it.
func TestLargeProtectedFileIsNotReadWhole(t *testing.T) {
	const huge = 64 << 30
	root := t.TempDir()
	write(t, filepath.Join(root, "tests", "acceptance.sh"), "exit 1\n")
	globs, err := ParseGlobs([]string{"tests/**"})
	if err != nil {
		t.Fatal(err)
	}
	j := Judged{Root: root, Protect: globs}
	b, err := Take(j)
	if err != nil {
		t.Fatal(err)
	}
	sparse(t, filepath.Join(root, "tests", "data.bin"), huge)
	sparse(t, filepath.Join(root, "tests", "acceptance.sh"), huge)

	changes, err := b.Check()
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 || changes[0].Rel != "tests/acceptance.sh" || changes[0].Kind != Modified || changes[1].Rel != "tests/data.bin" || changes[1].Kind != Added {
		t.Fatalf("changes %+v, want tests/acceptance.sh modified and tests/data.bin added", changes)
	}
	dir := t.TempDir()
	kept, err := b.Keep(changes, dir)
	if err != nil {
		t.Fatal(err)
	}
	if kept[1] != "tests/data.bin.head" {
		t.Errorf("kept %q, want tests/data.bin.head", kept)
	}
	if fi, err := os.Stat(filepath.Join(dir, "tests", "data.bin.head")); err != nil || fi.Size() != KeepLimit {
		t.Errorf("kept head: %v, %v; want %d bytes", fi, err, KeepLimit)
	}
	if err := b.Restore(changes); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(root, "tests", "acceptance.sh")); err != nil || string(data) != "exit 1\n" {
		t.Errorf("acceptance.sh after restore: %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(root, "tests", "data.bin")); !os.IsNotExist(err) {
		t.Errorf("data.bin after restore: %v, want it removed", err)
	}

	sparse(t, filepath.Join(root, "tests", "data.bin"), huge)
	if _, err := Take(j); err == nil || !strings.Contains(err.Error(), "narrow verify.protect") {
		t.Errorf("a baseline with a 64 GiB file: %v, want refused by its size", err)
	}
}
