package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRealShellFallsBack: without bash the tool shell runs the next
// shell there is, and says so when there is none.
func TestRealShellFallsBack(t *testing.T) {
	dir := t.TempDir()
	sh := filepath.Join(dir, "sh")
	if err := os.WriteFile(sh, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	old := RealShells
	t.Cleanup(func() { RealShells = old })
	RealShells = []string{filepath.Join(dir, "bash"), dir, sh}
	if got, err := realShell(); err != nil || got != sh {
		t.Errorf("realShell() = %q, %v; want %s (no bash, a folder skipped)", got, err, sh)
	}
	RealShells = []string{filepath.Join(dir, "bash")}
	if _, err := realShell(); err == nil {
		t.Error("realShell() found a shell where there is none")
	}
}
