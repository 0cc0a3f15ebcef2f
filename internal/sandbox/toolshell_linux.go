//go:build linux

package sandbox

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// toolShell is ToolShell, writing its messages to stderr.
func toolShell(args []string, stderr io.Writer) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "runner %s: %s\n", ToolShellArg, fmt.Sprintf(format, a...))
		return code
	}
	if len(args) < 1 {
		return fail(ExitUsage, "usage: runner %s <script> [shell argument...]", ToolShellArg)
	}
	shell, err := realShell()
	if err != nil {
		return fail(ExitNotFound, "%v", err)
	}
	if err := nestLayer(); err != nil {
		return fail(ExitNoRoom, "cannot nest the command's Landlock layer: %v", err)
	}
	argv := append([]string{shell}, args[1:]...)
	err = syscall.Exec(shell, argv, os.Environ())
	return fail(ExitNoExec, "exec %s: %v", shell, err)
}

// nestLayer enters a Landlock domain nested in the caller's that takes
// nothing away from it: it handles executing files only, and allows it
// everywhere, where the room allows it too. Not best effort: a kernel
// that refuses it refuses the command.
func nestLayer() error {
	exec := landlock.AccessFSSet(llsys.AccessFSExecute)
	c, err := landlock.NewConfig(exec)
	if err != nil {
		return err
	}
	return c.Restrict(landlock.PathAccess(exec, "/"))
}
