//go:build !linux

package sandbox

import (
	"fmt"
	"io"
)

// toolShell fails outside Linux: there is no Landlock to nest.
func toolShell(args []string, stderr io.Writer) int {
	fmt.Fprintf(stderr, "runner %s: Landlock needs Linux\n", ToolShellArg)
	return ExitNoRoom
}
