//go:build unix

package proc

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// KillGroup stops a process group that may have been left behind, for
// example by a runner that crashed: SIGTERM, up to grace for the group to
// vanish, then SIGKILL. A group that is already gone is not an error.
// pgid must be greater than 1.
func KillGroup(pgid int, grace time.Duration) error {
	if pgid <= 1 {
		return fmt.Errorf("kill process group %d: not a valid process group id", pgid)
	}
	if !GroupAlive(pgid) {
		return nil
	}
	if err := signalGroup(pgid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("kill process group %d: %w", pgid, err)
	}
	if waitGone(pgid, time.Now().Add(grace)) {
		return nil
	}
	if err := signalGroup(pgid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill process group %d: %w", pgid, err)
	}
	if !waitGone(pgid, time.Now().Add(killWait)) {
		return fmt.Errorf("kill process group %d: still alive %s after SIGKILL", pgid, killWait)
	}
	return nil
}

// GroupAlive reports whether the process group pgid still has a live
// member. Ids <= 1 are never alive (they would address every process).
func GroupAlive(pgid int) bool {
	if pgid <= 1 {
		return false
	}
	return groupAlive(pgid)
}

// waitGone polls until the group is gone or the deadline passes.
func waitGone(pgid int, deadline time.Time) bool {
	return waitFor(func() bool { return !GroupAlive(pgid) }, deadline)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(cond func() bool, deadline time.Time) bool {
	delay := 5 * time.Millisecond
	for {
		if cond() {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		time.Sleep(min(delay, left))
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// signalGroup sends sig to every process of the group; a group that no
// longer exists is not an error.
func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("signal process group %d: not a valid process group id", pgid)
	}
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// killZero reports whether signal 0 reaches the group (EPERM: it exists).
func killZero(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGABRT: "SIGABRT", syscall.SIGALRM: "SIGALRM", syscall.SIGBUS: "SIGBUS",
	syscall.SIGFPE: "SIGFPE", syscall.SIGHUP: "SIGHUP", syscall.SIGILL: "SIGILL",
	syscall.SIGINT: "SIGINT", syscall.SIGKILL: "SIGKILL", syscall.SIGPIPE: "SIGPIPE",
	syscall.SIGQUIT: "SIGQUIT", syscall.SIGSEGV: "SIGSEGV", syscall.SIGTERM: "SIGTERM",
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2", syscall.SIGXCPU: "SIGXCPU",
}

func signalName(sig syscall.Signal) string {
	if n, ok := signalNames[sig]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}
