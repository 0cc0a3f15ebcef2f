// Package e2e is the harness of the end-to-end tests: the programs their
// test binaries play (the runner, the scripted fake agent, the crash
// agent), and a repository driven by real `runner` processes that the
// tests kill, restart and inspect (Repo). The tests themselves live in
// e2e/crash (kills at every write, hostile agents, the processes a dead
// runner leaves), e2e/parallel (parallel slots and nights killed at
// random), e2e/workers (workers on a real Temporal dev server) and cmd/runner (the testscript scenarios of
// testdata/script), each a package of its own so that go test runs them
// side by side, each within its own time limit.
//
// Nothing here is part of the runner: only test binaries import it.
package e2e

import (
	"os"

	"github.com/runner-cli/runner/internal/cli"
	"github.com/runner-cli/runner/internal/fakeagent"
)

// Commands are the programs a test binary of the end-to-end tests plays,
// by the name it is started under (testscript.Main puts each on PATH):
// the runner, the scripted fake agent, and fake codex and claude CLIs
// (their script in FAKEAGENT_SCRIPT). The crash agent needs no name: the
// runner starts the test binary with CrashAgentEnv set, and this
// package's init plays it.
func Commands() map[string]func() {
	return map[string]func(){
		"runner":    func() { os.Exit(cli.Main()) },
		"fakeagent": func() { os.Exit(fakeagent.Main()) },
		"codex":     func() { os.Exit(fakeagent.MainAs(fakeagent.ModeCodex)) },
		"claude":    func() { os.Exit(fakeagent.MainAs(fakeagent.ModeClaude)) },
	}
}
