//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// hidePaths covers each of paths (Room.Hidden) in the helper's mount
// namespace, so that nothing in the room reads it: a file by /dev/null
// (it reads as empty), a folder by an empty tmpfs, each mount read-only.
// Links are resolved first, so that what is covered is the file itself,
// whichever path leads to it. A path that does not exist, or that the
// helper cannot reach, is left alone: the room cannot reach it either.
// A folder that holds one of open, the room's writable paths, is an
// error: hidden, the room could not work.
func hidePaths(paths, open []string) error {
	for _, p := range paths {
		real, err := filepath.EvalSymlinks(p)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			continue
		}
		if err == nil && holdsAny(real, open) {
			err = errors.New("it holds a path the room may write")
		}
		if err == nil {
			err = cover(real)
		}
		if err != nil {
			return fmt.Errorf("hide %s: %w", p, err)
		}
	}
	return nil
}

// cover mounts over the file or folder at p (a path without links), read
// only, through a descriptor of it: what is covered is what was found.
func cover(p string) error {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	target := "/proc/self/fd/" + strconv.Itoa(fd)
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return unix.Mount("tmpfs", target, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555")
	}
	if err := unix.Mount("/dev/null", target, "", unix.MS_BIND, ""); err != nil {
		return err
	}
	// The bind is the mount at p now (the descriptor still names the
	// file beneath it).
	return unix.MountSetattr(unix.AT_FDCWD, p, 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOEXEC})
}
