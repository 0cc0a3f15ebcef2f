package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestInvocation: the demo's closing hints name a command the reader can
// run as things are: `runner` only when that name on PATH is this very
// binary, `go run ./cmd/runner` for the build `go run` made.
func TestInvocation(t *testing.T) {
	bin := t.TempDir()
	self := filepath.Join(bin, "runner")
	if err := os.WriteFile(self, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	if got := invocation(self); got != "runner" {
		t.Errorf("runner on PATH is this binary: invocation = %q, want runner", got)
	}

	other := filepath.Join(t.TempDir(), "runner-copy")
	if err := os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := invocation(other); got != other {
		t.Errorf("another runner on PATH: invocation = %q, want the path %s", got, other)
	}

	t.Setenv("PATH", t.TempDir())
	goRun := filepath.Join(os.TempDir(), "go-build1234", "b001", "exe", "runner")
	if got := invocation(goRun); got != "go run ./cmd/runner" {
		t.Errorf("a go run build: invocation = %q", got)
	}
	if isGoRunBuild("/usr/local/bin/runner") || isGoRunBuild(filepath.Join(os.TempDir(), "runner-demo", "runner")) {
		t.Error("isGoRunBuild is true outside a go-build folder")
	}
}
