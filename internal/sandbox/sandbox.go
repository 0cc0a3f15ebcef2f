// Package sandbox confines a command to a Room: it, and everything it
// starts, may read and execute every file but write only in the room.
// The runner applies it by starting its own binary in a hidden mode,
// `runner __confine <room json> -- argv...` (see Wrap and Confine), which
// builds the room's walls around itself and then runs the command.
//
// There are two layers, each where the kernel gives it:
//
// Namespaces (Room.Namespaces; Linux user, mount and PID namespaces, see
// Clone): package proc starts the helper in new namespaces, where it is
// the first process. There it makes every mount read-only except the
// room's writable paths (bind mounts, as bubblewrap does), so that chmod,
// chown, utime and writes outside fail; keeps Room.ReadOnly paths
// read-only even inside them; gives the room a /dev/shm of its own;
// covers every path Unix socket bound outside the room, and hides the
// folders where a session's sockets live ($XDG_RUNTIME_DIR, tmux's, the
// X server's), so that no program outside the room can be asked to run
// something; mounts a /proc of its own PID namespace (the runner and
// every other process are out of sight); bounds the room's processes
// (Room.MaxProcesses, RLIMIT_NPROC under the namespace's own user id);
// covers the paths no room may read (Room.Hidden: the engine's key).
// Then it applies Landlock, drops every capability, starts the command
// as its child and waits for it, as the namespace's init: it exits with
// the command's status (128+N when a signal N killed it), and the kernel
// kills whatever of the room is left when it exits.
//
// Landlock (Linux 5.13 and later), in go-landlock's strictest file
// configuration (V11) brought down to what the kernel supports (best
// effort; Confine refuses to run anything where the kernel has no
// Landlock at all):
//
//   - everywhere ("/"): read files, list directories, execute;
//   - the room's Writable directories: everything, including moving and
//     linking files between them (the "refer" right, ABI 2+);
//   - the room's WritableFiles: write and truncate;
//   - /dev/null and /dev/zero: write; /dev/tty, /dev/ptmx and /dev/pts/*:
//     write and, from ABI 5, the ioctls a terminal needs;
//   - from ABI 9, connecting to a Unix socket by path is allowed only to
//     sockets made inside the sandbox (ssh-agent, docker.sock and the
//     like are out of reach); before ABI 9 it is not restricted;
//   - with ScopeSignals and ABI 6+: no signal to, and no abstract Unix
//     socket of, a process outside the sandbox.
//
// Without namespaces the helper applies Landlock alone and executes the
// command in its place: the command keeps the helper's process id,
// process group, cgroup and descriptors. Either way the network is not
// restricted, the helper sets no_new_privs (setuid programs do not gain
// privileges), the rules hold for the command and all it starts, for
// good, and the environment variables that name a socket outside the
// room (SocketVars) are not passed on. Landlock alone does not cover
// chmod, chown, utime, stat or ioctls on regular files; Layers says which
// openings a machine leaves.
//
// Any binary that links this package plays that helper: init runs
// Confine and exits when os.Args[1] is ConfineArg, before main or
// TestMain, so every test binary of a package that starts confined
// commands plays it without being told to.
package sandbox

import (
	"encoding/json"
	"os"
)

// Room is what a confined command may write; everything else it may only
// read and execute. Paths must be absolute. A path that does not exist
// when the command starts is skipped, with a note on the command's
// standard error: the command cannot create it either.
type Room struct {
	// Writable are directories where the command may do anything a file
	// system allows: create, write, truncate, remove and rename files and
	// directories, and move or link them between these directories.
	Writable []string `json:"writable,omitempty"`
	// WritableFiles are single files the command may write and truncate,
	// but neither remove nor replace by a rename.
	WritableFiles []string `json:"writable_files,omitempty"`
	// ReadOnly are paths inside the writable ones that stay read-only
	// (a worktree's .git file): with Namespaces, a read-only bind mount
	// keeps them from being written, replaced or removed. Landlock alone
	// cannot carve them out of a writable directory: without Namespaces
	// they are writable, and the caller must check them afterwards.
	ReadOnly []string `json:"read_only,omitempty"`
	// Hidden are paths nothing in the room may read (Hide, SPEC §22:
	// the engine's key): with Namespaces, each is covered in the room's
	// mount namespace, a file by an empty read-only one, a folder by an
	// empty read-only tmpfs, after its links are resolved. Landlock
	// alone cannot take reading away from one file: without Namespaces
	// they are readable (Layers.HidesPaths says so).
	Hidden []string `json:"hidden,omitempty"`
	// ScopeSignals, where the kernel has Landlock ABI 6 or later, keeps
	// the command from signalling processes outside its sandbox and from
	// connecting to abstract Unix sockets made outside it.
	ScopeSignals bool `json:"scope_signals,omitempty"`
	// Namespaces, when not "", makes the helper build the room's walls
	// in namespaces of its own (see the package comment): NamespacesUser
	// or NamespacesRoot, which Clone turns into how the helper is
	// started. Layers says which one a machine gives.
	Namespaces string `json:"namespaces,omitempty"`
	// MaxProcesses, when positive, bounds the processes (threads count)
	// of the room: with NamespacesUser, RLIMIT_NPROC under the
	// namespace's own user id (which the kernel does not enforce for
	// root); package proc adds a cgroup pids.max where it can.
	MaxProcesses int `json:"max_processes,omitempty"`
	// ToolShell, when not "", is the tool shell (MakeToolShell): with
	// Namespaces, /etc/passwd in the room names it as the login shell
	// of the room's user, so that a CLI that runs its commands through
	// that shell (codex) runs them in the nested layer. Without
	// Namespaces it changes nothing.
	ToolShell string `json:"tool_shell,omitempty"`
	// Probe makes the helper build the room and exit 0 without running
	// the command: a probe of what the machine gives (see Layers).
	Probe bool `json:"probe,omitempty"`
}

// Namespaces of a room (Room.Namespaces).
const (
	// NamespacesUser: new user, mount and PID namespaces, the runner's
	// user and group ids mapped to themselves; what an unprivileged user
	// can make where the kernel allows it, and what root uses too (its
	// capabilities then hold in the namespace only).
	NamespacesUser = "user"
	// NamespacesRoot: new mount and PID namespaces only, for root where
	// user namespaces are not allowed; every capability is dropped
	// before the command starts.
	NamespacesRoot = "root"
)

// ConfineArg is the hidden subcommand that makes the runner's binary
// confine a command: `runner __confine <room json> -- argv...`.
const ConfineArg = "__confine"

// Wrap returns the command line that runs argv through self (the runner's
// binary, or the name that binary needs in argv[0]) confined to room.
// With room.Namespaces the helper must be started as Clone says.
func Wrap(self string, room Room, argv []string) []string {
	spec, err := json.Marshal(room)
	if err != nil { // cannot happen: strings, numbers and bools
		panic(err)
	}
	out := make([]string, 0, len(argv)+4)
	out = append(out, self, ConfineArg, string(spec), "--")
	return append(out, argv...)
}

// Confine is `runner __confine`'s body: it reads the room from args[0],
// builds its walls (see the package comment), and runs args[2:] (args[1]
// is "--") inside, looking a bare program name up in $PATH. Without
// namespaces it returns only on failure; with them it returns the
// command's exit status once the command exited. A failure is said on
// standard error, with a non-zero status (see the Exit constants); it
// never runs the command with fewer walls than the room asks for.
func Confine(args []string) int {
	return confine(args, os.Stderr)
}

// Exit statuses of a failed Confine.
const (
	ExitUsage    = 2   // bad arguments or room
	ExitNoRoom   = 125 // the confinement could not be applied
	ExitNoExec   = 126 // the program could not be executed
	ExitNotFound = 127 // the program was not found
)

func init() {
	if len(os.Args) > 1 && os.Args[1] == ConfineArg {
		os.Exit(Confine(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == ToolShellArg {
		os.Exit(ToolShell(os.Args[2:]))
	}
}
