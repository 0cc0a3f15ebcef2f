// Package sandbox confines a command with Landlock (Linux 5.13 and later):
// the command, and everything it starts, may read and execute every file
// but write only in its Room. The runner applies it by starting its own
// binary in a hidden mode, `runner __confine <room json> -- argv...`
// (see Wrap and Confine), which restricts itself and then executes the
// command in its place: the command keeps the helper's process id,
// process group, cgroup and descriptors, so whatever runs it (package
// proc, the supervisor) sees no difference.
//
// The rules, in go-landlock's strictest file configuration (V11) brought
// down to what the kernel supports (best effort; Confine refuses to run
// anything where the kernel has no Landlock at all):
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
// The network is not restricted. The helper sets no_new_privs (setuid
// programs do not gain privileges) and the rules hold for the command
// and all it starts, for good. Landlock does not cover chmod, chown,
// utime, stat or ioctls on regular files.
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
	// WritableFiles are single files (e.g. ~/.claude.json) the command
	// may write and truncate, but neither remove nor replace by a
	// rename.
	WritableFiles []string `json:"writable_files,omitempty"`
	// ScopeSignals, where the kernel has Landlock ABI 6 or later, keeps
	// the command from signalling processes outside its sandbox and from
	// connecting to abstract Unix sockets made outside it.
	ScopeSignals bool `json:"scope_signals,omitempty"`
}

// ConfineArg is the hidden subcommand that makes the runner's binary
// confine a command: `runner __confine <room json> -- argv...`.
const ConfineArg = "__confine"

// Wrap returns the command line that runs argv through self (the runner's
// binary, or the name that binary needs in argv[0]) confined to room.
func Wrap(self string, room Room, argv []string) []string {
	spec, err := json.Marshal(room)
	if err != nil { // cannot happen: strings and a bool
		panic(err)
	}
	out := make([]string, 0, len(argv)+4)
	out = append(out, self, ConfineArg, string(spec), "--")
	return append(out, argv...)
}

// Confine is `runner __confine`'s body: it reads the room from args[0],
// restricts the current process (all its threads) to it with Landlock,
// and executes args[2:] (args[1] is "--") in its place, looking a bare
// program name up in $PATH. It returns only on failure, after saying why
// on standard error, with a non-zero status (see the Exit constants); it
// never runs the command unconfined.
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
}
