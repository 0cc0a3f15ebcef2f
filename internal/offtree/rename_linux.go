package offtree

import "golang.org/x/sys/unix"

// renameInto renames src to name in the folder dirfd, never over a file
// there (EEXIST).
func renameInto(src string, dirfd int, name string) error {
	return unix.Renameat2(unix.AT_FDCWD, src, dirfd, name, unix.RENAME_NOREPLACE)
}
