//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// passwdMax bounds the user database read.
const passwdMax = 16 << 20

// giveShell covers /etc/passwd in the helper's mount namespace with a
// copy that names shell as the login shell of the helper's user (an
// entry is added where none names it), read-only: the programs of the
// room that start their user's shell (codex does, for every command)
// start shell. The copy is written in a tmpfs mounted for it on scratch,
// an existing folder, and detached from there once it covers the file.
func giveShell(shell, scratch string) error {
	db, err := os.ReadFile(passwdFile)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("give the room's user the tool shell: %w", err)
	}
	if len(db) > passwdMax {
		return fmt.Errorf("give the room's user the tool shell: %s is larger than %d MiB", passwdFile, passwdMax>>20)
	}
	uid := os.Getuid()
	db, found := withShell(db, uid, shell)
	if !found {
		if len(db) > 0 && db[len(db)-1] != '\n' {
			db = append(db, '\n')
		}
		home, _ := os.UserHomeDir()
		db = fmt.Appendf(db, "runner:x:%d:%d::%s:%s\n", uid, os.Getgid(), home, shell)
	}
	if _, err := os.Stat(passwdFile); err != nil {
		return fmt.Errorf("give the room's user the tool shell: %w", err)
	}
	if err := unix.Mount("tmpfs", scratch, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755"); err != nil {
		return fmt.Errorf("give the room's user the tool shell: mount a tmpfs on %s: %w", scratch, err)
	}
	defer unix.Unmount(scratch, unix.MNT_DETACH)
	copyPath := filepath.Join(scratch, "passwd")
	if err := os.WriteFile(copyPath, db, 0o644); err != nil {
		return fmt.Errorf("give the room's user the tool shell: %w", err)
	}
	if err := unix.Mount(copyPath, passwdFile, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("give the room's user the tool shell: bind %s: %w", passwdFile, err)
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, passwdFile, 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOEXEC}); err != nil {
		return fmt.Errorf("give the room's user the tool shell: make %s read-only: %w", passwdFile, err)
	}
	return nil
}
