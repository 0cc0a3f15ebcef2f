//go:build !linux

package sandbox

import (
	"errors"
	"fmt"
	"io"
)

// ABI returns 0 outside Linux: Landlock is a Linux security module.
func ABI() (int, error) {
	return 0, errors.New("Landlock needs Linux")
}

var abiFunc = ABI

// confine fails outside Linux, after checking its arguments.
func confine(args []string, stderr io.Writer) int {
	if _, _, err := parseArgs(args); err != nil {
		fmt.Fprintf(stderr, "runner %s: %v\n", ConfineArg, err)
		return ExitUsage
	}
	_, err := abiFunc()
	fmt.Fprintf(stderr, "runner %s: cannot confine %s: %v\n", ConfineArg, args[2], err)
	return ExitNoRoom
}
