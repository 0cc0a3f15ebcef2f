//go:build linux

package proc

import "syscall"

// sysProcAttr puts the child in a process group of its own and asks the
// kernel to kill it if the thread that started it (and so the runner) dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
