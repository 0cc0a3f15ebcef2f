//go:build unix && !linux

package fsutil

// openBeneath opens the directory rel below dirfd without following a
// symbolic link in any of its components: one openat with O_NOFOLLOW per
// component.
func openBeneath(dirfd int, rel string, readable bool) (int, error) {
	return walkBeneath(dirfd, rel)
}
