//go:build !linux

package git

// openFiles cannot tell which files are open outside Linux.
func openFiles() (map[string]bool, bool) { return nil, false }
