//go:build unix && !linux

package proc

import "syscall"

// sysProcAttr puts the child in a process group of its own.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// groupAlive reports whether signal 0 reaches any member of the group.
// Zombies count as alive here; Linux reads /proc instead.
func groupAlive(pgid int) bool {
	return killZero(pgid)
}
