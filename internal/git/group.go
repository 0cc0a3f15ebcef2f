package git

import (
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// inOwnGroup starts cmd in a process group of its own, so that stopping
// it stops what it started too (a filter, a credential helper, the
// sleeping child of a wrapper script). When its context ends, the group
// gets SIGTERM, then SIGKILL after killAfter. The returned function is
// called once cmd has been waited for: it cancels a SIGKILL still to come,
// which could otherwise reach a new group that reused the id.
func inOwnGroup(cmd *exec.Cmd) (stop func()) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var mu sync.Mutex
	var kill *time.Timer
	done := false
	cmd.Cancel = func() error {
		pgid := cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGTERM)
		mu.Lock()
		defer mu.Unlock()
		if !done {
			kill = time.AfterFunc(killAfter, func() {
				mu.Lock()
				defer mu.Unlock()
				if !done {
					syscall.Kill(-pgid, syscall.SIGKILL)
				}
			})
		}
		return nil
	}
	return func() {
		mu.Lock()
		defer mu.Unlock()
		done = true
		if kill != nil {
			kill.Stop()
		}
	}
}
