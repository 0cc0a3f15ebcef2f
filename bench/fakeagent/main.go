// Command fakeagent is the scripted fake agent of the tests
// (internal/fakeagent) as a program of its own, for the benchmarks in
// BENCHMARKS.md: FAKEAGENT_SCRIPT names its script, and FAKEAGENT_MODE=codex
// or claude makes it play that CLI.
package main

import (
	"os"

	"github.com/runner-cli/runner/internal/fakeagent"
)

func main() {
	os.Exit(fakeagent.Main())
}
