//go:build !linux

package offtree

import "golang.org/x/sys/unix"

// renameInto renames src to name in the folder dirfd; the caller checked
// that name was free.
func renameInto(src string, dirfd int, name string) error {
	return unix.Renameat(unix.AT_FDCWD, src, dirfd, name)
}
