package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A worker's folder is its own: a second worker there is refused, naming
// the first, until the first lets it go.
func TestLockDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	release, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	holder, _ := os.ReadFile(filepath.Join(dir, holderFile))
	if !strings.HasPrefix(string(holder), "pid ") {
		t.Errorf("%s: %q, want the holder's pid", holderFile, holder)
	}
	if _, err := lockDir(dir); err == nil || !strings.Contains(err.Error(), "another runner worker uses "+dir+" (pid ") {
		t.Errorf("a second worker in the folder: %v, want refused naming the first", err)
	}
	release()
	again, err := lockDir(dir)
	if err != nil {
		t.Fatalf("after the first let it go: %v", err)
	}
	again()
}
