package git

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// fileContains finds the bytes wherever they are, across the pieces it
// reads too.
func TestFileContains(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	for _, size := range []int{0, 3, 4, 65535, 65536, 65537, 200000} {
		for _, at := range []int{-1, 0, 65533, 65534, 65535, 65536, 131069, 199996} {
			if at+len(gitlinkMode) > size {
				continue
			}
			b := bytes.Repeat([]byte{1}, size)
			if at >= 0 {
				copy(b[at:], gitlinkMode)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if got, err := fileContains(p, gitlinkMode); err != nil || got != (at >= 0) {
				t.Errorf("%d bytes, the mode at %d: fileContains = %v, %v", size, at, got, err)
			}
		}
	}
	if _, err := fileContains(filepath.Join(t.TempDir(), "none"), gitlinkMode); !os.IsNotExist(err) {
		t.Errorf("fileContains of a missing file: %v", err)
	}
}
