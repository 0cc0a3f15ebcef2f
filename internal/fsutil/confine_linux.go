package fsutil

import (
	"errors"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once openat2 turned out to be missing (a kernel older
// than 5.6) or forbidden (a seccomp filter): the component walk is used
// from then on.
var noOpenat2 atomic.Bool

// openBeneath opens the directory rel below dirfd without following a
// symbolic link in any of its components and without leaving dirfd. With
// readable the descriptor can be listed and fsynced; otherwise it is an
// O_PATH descriptor, good only as the directory of *at calls.
func openBeneath(dirfd int, rel string, readable bool) (int, error) {
	if !noOpenat2.Load() {
		flags := uint64(unix.O_DIRECTORY | unix.O_CLOEXEC)
		if readable {
			flags |= unix.O_RDONLY
		} else {
			flags |= unix.O_PATH
		}
		// EAGAIN: a rename elsewhere raced the lookup; the kernel asks
		// for a retry. A few retries, then the walk, which has no such
		// limit.
		for try := 0; try < 16; try++ {
			fd, err := unix.Openat2(dirfd, rel, &unix.OpenHow{Flags: flags, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS})
			switch {
			case err == nil:
				return fd, nil
			case errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN):
				continue
			case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM):
				noOpenat2.Store(true)
			default:
				return -1, err
			}
			break
		}
	}
	return walkBeneath(dirfd, rel)
}
