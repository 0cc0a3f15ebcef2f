package executor

import (
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/runner-cli/runner/internal/sandbox"
)

// ClaudeShellVar names the shell Claude Code runs its Bash tool's
// commands with (a path that names bash or zsh).
const ClaudeShellVar = "CLAUDE_CODE_SHELL"

// The commands a confined CLI runs for its model go through the tool
// shell (sandbox.MakeToolShell): they work in a Landlock domain nested in
// the CLI's, where they cannot reach its descriptors (its standard
// output, the runner's stream). Claude Code takes it from
// CLAUDE_CODE_SHELL; codex from its user's login shell, which the room's
// /etc/passwd names where the room has namespaces (Room.ToolShell).

// tookShell reports whether a run of preset in room gives its CLI the
// tool shell: claude's confined, codex's confined in namespaces.
func tookShell(preset string, room *sandbox.Room) bool {
	switch {
	case room == nil:
		return false
	case preset == PresetClaude:
		return true
	case preset == PresetCodex:
		return room.Namespaces != ""
	}
	return false
}

// toolShell makes the tool shell of a run in room, out of the room's
// reach, and returns its path and what removes it.
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
	return path, remove, nil
}

// withToolShell gives the CLI of o and r the tool shell at path: claude
// in its environment (a CLAUDE_CODE_SHELL of executor.env gives way),
// codex in its room.
func withToolShell(o Options, r Request, path string) (Options, Request) {
	switch o.Preset {
	case PresetClaude:
		o.Env = maps.Clone(o.Env)
		delete(o.Env, ClaudeShellVar)
		r.Env = append(slices.Clip(r.Env), ClaudeShellVar+"="+path)
	case PresetCodex:
		room := *r.Confine
		room.ToolShell = path
		r.Confine = &room
	}
	return o, r
}
