package executor

import (
	"fmt"
	"os"

	"github.com/runner-cli/runner/internal/sandbox"
)

// ClaudeShellVar names the shell Claude Code runs its Bash tool's
// commands with (a path that names bash or zsh).
const ClaudeShellVar = "CLAUDE_CODE_SHELL"

// toolShell makes the tool shell (sandbox.MakeToolShell) of a confined
// claude run in room: the commands the CLI runs for its model then work
// in a Landlock domain nested in the CLI's, where they cannot reach its
// descriptors (its standard output, the runner's stream). It returns the
// variable that gives it to the CLI and what removes it.
func toolShell(room sandbox.Room) (string, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("the tool shell: the runner's binary: %w", err)
	}
	path, remove, err := sandbox.MakeToolShell(os.TempDir(), exe)
	if err != nil {
		return "", nil, err
	}
	if sandbox.ToolShellReachable(room, path) {
		remove()
		return "", nil, fmt.Errorf("the tool shell: %s is writable in the agent's room (sandbox.writable): the agent could replace it; leave %s out of sandbox.writable or set TMPDIR elsewhere", path, os.TempDir())
	}
	return ClaudeShellVar + "=" + path, remove, nil
}
