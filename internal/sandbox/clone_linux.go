//go:build linux

package sandbox

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Clone sets in sys how the helper of room must be started: in the new
// namespaces room.Namespaces names, where it is the first process.
// NamespacesUser maps the caller's user and group ids to themselves and,
// for a user other than root, keeps CAP_SYS_ADMIN in the namespace across
// the exec (an ambient capability) so that the helper can mount; the
// helper drops it, with every other capability, before the command
// starts. Nothing changes for a room without namespaces.
func Clone(room Room, sys *syscall.SysProcAttr) {
	switch room.Namespaces {
	case NamespacesUser:
		uid, gid := os.Getuid(), os.Getgid()
		sys.Cloneflags |= unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID
		sys.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		sys.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		sys.GidMappingsEnableSetgroups = false
		if uid != 0 {
			sys.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
		}
	case NamespacesRoot:
		sys.Cloneflags |= unix.CLONE_NEWNS | unix.CLONE_NEWPID
	}
}
