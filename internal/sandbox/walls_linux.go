//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// shmDir is where a room gets a /dev/shm of its own (POSIX shared memory
// and semaphores, which Python's multiprocessing and browsers need).
const shmDir = "/dev/shm"

// buildWalls builds room's walls in the helper's own mount namespace, as
// the package comment says: every mount read-only but the room's writable
// paths (bind mounts of themselves), its read-only paths held by
// read-only binds, its hidden paths covered, a /dev/shm of its own, the sockets of the machine
// covered, a /proc of its PID namespace. It returns the directories it
// made that the room may write besides room.Writable.
func buildWalls(room Room) (writable []string, err error) {
	// Nothing mounted here is seen outside; what is unmounted outside
	// goes from here too.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return nil, fmt.Errorf("make the mounts private: %w", err)
	}
	var open []string
	for _, p := range slices.Concat(room.Writable, room.WritableFiles) {
		if _, err := os.Stat(p); err != nil {
			continue // left out, with a note (roomRules)
		}
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return nil, fmt.Errorf("bind %s: %w", p, err)
		}
		open = append(open, p)
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		if errors.Is(err, unix.ENOSYS) {
			err = fmt.Errorf("%w (mount_setattr needs Linux 5.12 or later)", err)
		}
		return nil, fmt.Errorf("make every mount read-only: %w", err)
	}
	for _, p := range open {
		if err := unix.MountSetattr(unix.AT_FDCWD, p, 0, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return nil, fmt.Errorf("make %s writable: %w", p, err)
		}
	}
	for _, p := range room.ReadOnly {
		if _, err := os.Lstat(p); err != nil {
			continue // nothing there to keep
		}
		if err := unix.Mount(p, p, "", unix.MS_BIND, ""); err != nil {
			return nil, fmt.Errorf("bind %s: %w", p, err)
		}
		if err := unix.MountSetattr(unix.AT_FDCWD, p, 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return nil, fmt.Errorf("make %s read-only: %w", p, err)
		}
	}
	if err := hidePaths(room.Hidden, open); err != nil {
		return nil, err
	}
	shm := false
	if st, err := os.Stat(shmDir); err == nil && st.IsDir() {
		shm = true
	}
	if room.ToolShell != "" {
		scratch := shmDir
		if !shm {
			scratch = "/tmp"
		}
		if err := giveShell(room.ToolShell, scratch); err != nil {
			return nil, err
		}
	}
	if shm {
		if err := unix.Mount("tmpfs", shmDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
			return nil, fmt.Errorf("mount a %s of its own: %w", shmDir, err)
		}
		writable = append(writable, shmDir)
	}
	if err := closeSockets(slices.Concat(room.Writable, room.WritableFiles, writable)); err != nil {
		return nil, err
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return nil, fmt.Errorf("mount a /proc of its own: %w", err)
	}
	// The working directory was taken before the binds: taken again, it
	// is the room's (writable where the room is).
	if wd, err := os.Getwd(); err == nil {
		if err := os.Chdir(wd); err != nil {
			return nil, fmt.Errorf("enter %s again: %w", wd, err)
		}
	}
	return writable, nil
}
