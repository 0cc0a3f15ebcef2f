package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The commands an agent's CLI runs for its model (a test, a build, a
// grep) are started by the CLI, in its room, as its user: without more,
// such a command could open /proc/<the CLI's pid>/fd/1, the pipe to the
// runner, and write events the runner reads as the CLI's (a final
// message, a rate limit). The tool shell closes that: the CLI is given
// it as its shell, and it enters a Landlock domain nested in the CLI's
// before it starts the real shell. The kernel refuses a process ptrace
// access (which opening another process's /proc/<pid>/fd/*, mem or
// environ needs) to a process of a domain its own is nested in: the
// command and all it starts can no longer reach the CLI's descriptors,
// and the CLI still reaches theirs. The layer grants what the room
// grants, nothing less.

// ToolShellArg is the hidden subcommand that makes the runner's binary
// the tool shell: `runner __tool-shell <script> <shell arguments...>`,
// as the kernel starts it from the script MakeToolShell writes.
const ToolShellArg = "__tool-shell"

// ToolShellName is the name of the tool shell's script: the agents'
// CLIs take a shell whose path names bash.
const ToolShellName = "bash"

// RealShells are the shells the tool shell runs, the first found: bash,
// which both CLIs expect, else zsh, else sh (a system without bash, as
// some containers are; its -c and -l work as bash's).
var RealShells = []string{"/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash", "/bin/zsh", "/usr/bin/zsh", "/bin/sh"}

// MakeToolShell writes the tool shell of the runner's binary exe: a
// script named ToolShellName in a new directory below parent, which the
// kernel starts as `<exe> __tool-shell <script> args...` (through a link
// to exe beside it, as a script's first line cannot hold every path).
// It returns the script's path and what removes the directory. The
// directory must be out of the room's reach (a command that replaced the
// script would escape the nested layer): ToolShellReachable says so.
func MakeToolShell(parent, exe string) (string, func(), error) {
	dir, err := os.MkdirTemp(parent, "runner-tool-shell-")
	if err != nil {
		return "", nil, fmt.Errorf("the tool shell: %w", err)
	}
	remove := func() { os.RemoveAll(dir) }
	if err := os.Chmod(dir, 0o755); err != nil {
		remove()
		return "", nil, fmt.Errorf("the tool shell: %w", err)
	}
	link := filepath.Join(dir, "runner")
	script := filepath.Join(dir, ToolShellName)
	line := "#!" + link + " " + ToolShellArg + "\n"
	if strings.ContainsAny(link, " \t\n") || len(line) > 255 {
		remove()
		return "", nil, fmt.Errorf("the tool shell: %s cannot start a script (a blank in it, or longer than 250 bytes)", link)
	}
	if err := os.Symlink(exe, link); err != nil {
		remove()
		return "", nil, fmt.Errorf("the tool shell: %w", err)
	}
	if err := os.WriteFile(script, []byte(line), 0o755); err != nil {
		remove()
		return "", nil, fmt.Errorf("the tool shell: %w", err)
	}
	return script, remove, nil
}

// ToolShellReachable reports whether a room could replace the tool
// shell at path: its directory is one of the room's writable paths, or
// below one.
func ToolShellReachable(room Room, path string) bool {
	dir := filepath.Dir(path)
	return within(dir, room.Writable) || within(dir, room.WritableFiles)
}

// ToolShell is `runner __tool-shell`'s body: args[0] is the script the
// kernel started it from, args[1:] the shell's arguments. It enters a
// Landlock domain nested in the caller's and executes the first of
// RealShells with the same arguments. It returns only on failure, said
// on standard error with a non-zero status (the Exit constants): it
// never runs the shell without the layer.
func ToolShell(args []string) int {
	return toolShell(args, os.Stderr)
}

// realShell is the first of RealShells that exists.
func realShell() (string, error) {
	for _, s := range RealShells {
		if st, err := os.Stat(s); err == nil && !st.IsDir() {
			return s, nil
		}
	}
	return "", errors.New("no shell in " + strings.Join(RealShells, ", "))
}
