//go:build linux

package proc

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/sandbox"
)

// command is one command a supervisor runs (see supervise_linux.go).
type command struct {
	*supervisor
	spec supSpec

	pid     int // also its process group
	started time.Time
	exited  bool // its main process has been reaped

	stopping bool
	killAt   time.Time // when SIGKILL follows the SIGTERM
	lastKill time.Time

	pidsDone func() // removes what limitPids made, once nothing is left
}

// run starts the command of r and supervises it until nothing of it is
// left. It returns non-zero when the supervisor must exit at once:
// something survived SIGKILL for killWait.
func (sv *supervisor) run(r request) int {
	c := &command{supervisor: sv, spec: *r.spec}
	if c.spec.Grace <= 0 {
		c.spec.Grace = DefaultGrace
	}
	started := c.start(r.fds)
	closeFDs(r.fds) // only the command holds the runner's pipes now
	if !started {
		return 0
	}
	code := c.supervise()
	if code == 0 && c.pidsDone != nil {
		c.pidsDone()
	}
	if code == 0 {
		sv.nextCgroup()
	}
	return code
}

// start starts the command, in the cgroup if there is one, and reports
// both; it reports why when it cannot.
func (c *command) start(fds []int) bool {
	if len(fds) < 2 {
		c.out.send(supStatus{Errno: int(syscall.EBADF), Error: "supervisor: the command came without its pipes"})
		return false
	}
	files := []uintptr{uintptr(fds[0]), uintptr(fds[1])} // stdout, stderr
	if len(fds) > 2 {
		files = append([]uintptr{uintptr(fds[2])}, files...)
	} else {
		null, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			c.out.send(supStatus{Errno: int(syscall.EBADF), Error: "supervisor: open /dev/null: " + err.Error()})
			return false
		}
		defer unix.Close(null)
		files = append([]uintptr{uintptr(null)}, files...)
	}
	entered, done, err := c.limitPids(c.spec.MaxProcesses)
	if err != nil {
		c.out.send(supStatus{Refused: err.Error()})
		return false
	}
	pid, err := c.spawn(files, c.cg)
	if err != nil && c.cg != nil && !(c.pids.v2 && c.spec.MaxProcesses > 0) {
		// clone3 into a cgroup can be refused (an old kernel, a cgroup
		// the runner may not move processes into): start without it,
		// unless it holds the command's process limit.
		if pid2, err2 := c.spawn(files, nil); err2 == nil {
			c.noCgroup = fmt.Sprintf("start in cgroup %s: %v", c.cg.dir, err)
			c.cg.remove()
			c.cg, c.useCgroups, pid, err = nil, false, pid2, nil
		}
	}
	entered()
	if err != nil {
		done()
		errno := syscall.EINVAL
		errors.As(err, &errno)
		c.out.send(supStatus{Errno: int(errno), Error: err.Error()})
		return false
	}
	c.started, c.pid, c.pidsDone = time.Now(), pid, done
	if c.cg != nil {
		c.out.send(supStatus{Cgroup: c.cg.dir})
	} else if c.noCgroup != "" {
		c.out.send(supStatus{NoCgroup: c.noCgroup})
	}
	c.out.send(supStatus{Started: pid})
	return true
}

func (c *command) spawn(files []uintptr, cg *cgroup) (int, error) {
	sys := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	sandbox.Clone(sandbox.Room{Namespaces: c.spec.Namespaces}, sys)
	if cg != nil {
		sys.UseCgroupFD, sys.CgroupFD = true, cg.fd
	}
	return syscall.ForkExec(c.spec.Path, c.spec.Argv, &syscall.ProcAttr{
		Dir: c.spec.Dir, Env: c.spec.Env, Files: files, Sys: sys,
	})
}

// supervise reaps, stops when asked, and returns once the command and all
// it started are gone (0, after saying so) or something survived SIGKILL
// for killWait (1).
func (c *command) supervise() int {
	var tick <-chan time.Time
	for {
		select {
		case s := <-c.sigs:
			if c.signaled(s); c.gone {
				c.stop()
			}
		case r, ok := <-c.reqs:
			if !ok {
				c.gone = true
				c.reqs = nil // no more to read
			} else {
				closeFDs(r.fds) // a command while one runs is a runner's bug
			}
			c.stop()
		case <-tick:
		}
		children := c.reap()
		if c.exited && !children && (c.cg == nil || !c.cg.populated()) {
			c.out.send(supStatus{Done: true})
			return 0
		}
		if c.exited {
			c.stop() // what the command left running
		}
		if !c.stopping {
			continue
		}
		if tick == nil {
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			tick = t.C
		}
		if c.escalate() && c.exited {
			return 1
		}
	}
}

// reap collects every child that exited, reports the command's exit, and
// says whether children are left.
func (c *command) reap() (children bool) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return err == nil // 0: children, none exited; ECHILD: none
		}
		if pid != c.pid || c.exited {
			continue
		}
		c.exited = true
		m := supStatus{Exited: true, Took: time.Since(c.started)}
		var sig syscall.Signal
		if ws.Signaled() {
			sig = ws.Signal()
		} else {
			m.Code, sig = helperStatus(c.spec.Namespaces != "", ws.ExitStatus())
		}
		m.Signal = int(sig)
		// On disk before the runner is told: a runner that dies now
		// leaves the exit status to the next one.
		if c.spec.ExitFile != "" && (c.spec.ConfineDir == "" || fsutil.Confine(c.spec.ConfineDir) == nil) {
			writeExitRecord(c.spec.ExitFile, m.Code, sig, c.stopping, m.Took)
			if c.spec.ConfineDir != "" {
				fsutil.Release(c.spec.ConfineDir)
			}
		}
		c.out.send(m)
	}
}

// stop starts stopping the command (once): SIGTERM now, SIGKILL after the
// grace period (see escalate).
func (c *command) stop() {
	if c.stopping {
		return
	}
	c.stopping = true
	c.killAt = time.Now().Add(c.spec.Grace)
	c.signalAll(syscall.SIGTERM)
}

// escalate sends SIGKILL once the grace period is over, and again every
// killRepeat; it reports whether killWait has passed since the first.
func (c *command) escalate() (gaveUp bool) {
	now := time.Now()
	if now.Before(c.killAt) {
		return false
	}
	if now.Sub(c.lastKill) >= killRepeat {
		c.lastKill = now
		c.signalAll(syscall.SIGKILL)
	}
	return now.Sub(c.killAt) > killWait
}

// signalAll sends sig once to every live process of the command: its
// process group as a whole, then each process of the cgroup and below the
// supervisor that is not in that group. SIGKILL also goes through
// cgroup.kill, which reaches processes forked meanwhile.
func (c *command) signalAll(sig syscall.Signal) {
	if c.cg != nil && sig == syscall.SIGKILL {
		c.cg.kill()
	}
	table := processTable()
	targets := descendants(table, c.self)
	if c.cg != nil {
		targets = append(targets, c.cg.procs()...)
	}
	// The group's id is the command's pid, which stays reserved while the
	// command is unreaped or the group has a member.
	group := !c.exited
	for _, pid := range targets {
		if st, ok := table[pid]; ok && !st.dead() && st.pgrp == c.pid {
			group = true
		}
	}
	if group {
		signalGroup(c.pid, sig)
	}
	sent := map[int]bool{c.self: true}
	for _, pid := range targets {
		st, known := table[pid]
		if sent[pid] || (known && (st.dead() || st.pgrp == c.pid)) {
			continue
		}
		sent[pid] = true
		unix.Kill(pid, sig)
	}
}
