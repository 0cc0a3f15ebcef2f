//go:build linux

package git

import (
	"os"
	"path/filepath"
)

// openFiles returns the files open in the processes this user can see
// (their /proc/PID/fd links); ok is false when /proc cannot be read.
func openFiles() (map[string]bool, bool) {
	fds, err := filepath.Glob("/proc/[0-9]*/fd/*")
	if err != nil {
		return nil, false
	}
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		return nil, false
	}
	open := make(map[string]bool, len(fds))
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil {
			open[target] = true
		}
	}
	return open, true
}
