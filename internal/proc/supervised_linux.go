//go:build linux

package proc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// supervisorSlack is how much longer than its own grace period and
// killWait the runner gives a supervisor before it kills it and stops
// what is left itself.
const supervisorSlack = time.Second

// supervised is a command Run started under the supervisor (see
// supervise_linux.go), seen from the runner.
type supervised struct {
	name  string // the program, as given
	grace time.Duration
	cmd   *exec.Cmd // the supervisor
	ctl   *os.File  // runner → supervisor
	msgs  <-chan supStatus
	done  chan struct{} // closed once the supervisor has exited

	cmdPid int       // the command's pid and process group
	cgroup string    // the command's cgroup directory, or ""
	start  time.Time // when the start was reported

	mu       sync.Mutex
	why      error // why a stop was asked for, while the command ran
	stopSent bool
	exited   bool // the command's exit has been reported
}

// startSupervised starts the supervisor and has it start the command. The
// program is looked up, and the environment made, as os/exec does for a
// direct start, so the command runs exactly as it would without the
// supervisor.
func startSupervised(runCtx context.Context, sc *supervisorConf, s Spec, grace time.Duration, ends stdio) (child, error) {
	name := s.Argv[0]
	if err := runCtx.Err(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	lookup := exec.Command(name, s.Argv[1:]...)
	lookup.Dir, lookup.Env = s.Dir, s.Env
	if lookup.Err != nil {
		return nil, fmt.Errorf("start %s: %w", name, lookup.Err)
	}
	for _, kv := range s.Env {
		if strings.IndexByte(kv, 0) >= 0 {
			return nil, fmt.Errorf("start %s: exec: environment variable contains NUL", name)
		}
	}
	spec, err := json.Marshal(supSpec{
		Path: lookup.Path, Argv: lookup.Args, Env: lookup.Environ(), Dir: s.Dir,
		Grace: grace, Parent: os.Getpid(), NoCgroup: sc.noCgroup,
	})
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	statusR, statusW, err1 := os.Pipe()
	ctlR, ctlW, err2 := os.Pipe()
	closePipes := func() {
		for _, f := range []*os.File{statusR, statusW, ctlR, ctlW} {
			if f != nil {
				f.Close()
			}
		}
	}
	if err1 != nil || err2 != nil {
		closePipes()
		return nil, fmt.Errorf("start %s: create the supervisor's pipes: %v %v", name, err1, err2)
	}
	cmd := &exec.Cmd{
		Path:       sc.path,
		Args:       []string{sc.arg0, SuperviseArg},
		Env:        append(os.Environ(), s.Mark...),
		Stdout:     ends.out,
		Stderr:     ends.err,
		ExtraFiles: []*os.File{statusW, ctlR}, // descriptors 3 and 4
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:   true, // not stopped along with the command's group, nor by a terminal's Ctrl-C
			Pdeathsig: parentDeathSignal,
		},
	}
	if ends.in != nil {
		cmd.Stdin = ends.in
	}
	if err := cmd.Start(); err != nil {
		closePipes()
		return nil, fmt.Errorf("start %s: start the supervisor: %w", name, err)
	}
	statusW.Close()
	ctlR.Close()
	msgs := make(chan supStatus, 8)
	sv := &supervised{name: name, grace: grace, cmd: cmd, ctl: ctlW, msgs: msgs, done: make(chan struct{})}
	go func() {
		defer close(msgs)
		defer statusR.Close()
		dec := json.NewDecoder(bufio.NewReader(statusR))
		for {
			var m supStatus
			if dec.Decode(&m) != nil {
				return
			}
			msgs <- m
		}
	}()
	go func() {
		cmd.Wait()
		close(sv.done)
	}()
	// A write error means the supervisor is gone; its status says more.
	ctlW.Write(append(spec, '\n'))

	var why []string
	for m := range msgs {
		switch {
		case m.Cgroup != "":
			sv.cgroup = m.Cgroup
		case m.NoCgroup != "":
		case m.Errno != 0:
			<-sv.done
			ctlW.Close()
			return nil, fmt.Errorf("start %s: %w", name, &os.PathError{Op: "fork/exec", Path: lookup.Path, Err: syscall.Errno(m.Errno)})
		case m.Error != "":
			why = append(why, m.Error)
		case m.Started > 0:
			sv.cmdPid, sv.start = m.Started, time.Now()
			go sv.watch(runCtx)
			return sv, nil
		}
	}
	<-sv.done
	ctlW.Close()
	why = append(why, cmd.ProcessState.String())
	return nil, fmt.Errorf("start %s: the supervisor ended before starting it: %s", name, strings.Join(why, "; "))
}

func (sv *supervised) pid() int { return sv.cmdPid }

// watch asks the supervisor to stop the command when runCtx is done, and
// kills the supervisor if it does not exit in time.
func (sv *supervised) watch(runCtx context.Context) {
	select {
	case <-sv.done:
		return
	case <-runCtx.Done():
	}
	sv.requestStop(context.Cause(runCtx))
	t := time.NewTimer(sv.grace + killWait + supervisorSlack)
	defer t.Stop()
	select {
	case <-sv.done:
	case <-t.C:
		sv.cmd.Process.Kill()
	}
}

// requestStop asks the supervisor to stop the command (SIGTERM, grace,
// SIGKILL); cause is kept when the command is still running.
func (sv *supervised) requestStop(cause error) {
	sv.mu.Lock()
	first := !sv.stopSent
	sv.stopSent = true
	if !sv.exited && sv.why == nil {
		sv.why = cause
	}
	sv.mu.Unlock()
	if first {
		sv.ctl.Write([]byte("stop\n"))
	}
}

func (sv *supervised) cause() error {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return sv.why
}

// wait returns the exit the supervisor reports. A supervisor that ends
// without one was killed (or crashed): the command then got its
// parent-death signal, SIGKILL.
func (sv *supervised) wait() exitStatus {
	ex := exitStatus{signal: syscall.SIGKILL}
	for m := range sv.msgs {
		if m.Exited {
			ex = exitStatus{code: m.Code, signal: syscall.Signal(m.Signal), took: m.Took}
			break
		}
	}
	if ex.took == 0 {
		<-sv.done
		ex.took = time.Since(sv.start)
	}
	sv.mu.Lock()
	sv.exited = true
	sv.mu.Unlock()
	return ex
}

// finish waits for the supervisor, which exits once nothing of the
// command is left. If it does not exit in time, or did not end well, the
// runner stops the command's group and cgroup itself.
func (sv *supervised) finish() {
	t := time.NewTimer(sv.grace + killWait + supervisorSlack)
	defer t.Stop()
	select {
	case <-sv.done:
	case <-t.C:
		sv.cmd.Process.Kill()
		<-sv.done
	}
	for range sv.msgs {
	}
	sv.ctl.Close()
	if ps := sv.cmd.ProcessState; ps == nil || !ps.Success() {
		stopRemains(sv.cmdPid, sv.cgroup, sv.grace)
	}
}

// stopRemains stops what a supervisor that died left of its command: the
// process group and the processes of the cgroup (SIGTERM, grace,
// SIGKILL), then removes the cgroup. What left both is found later, by
// environment (see GroupsWithEnv).
func stopRemains(pgid int, cgroupDir string, grace time.Duration) {
	gone := func() bool {
		return !GroupAlive(pgid) && (cgroupDir == "" || !cgroupPopulated(cgroupDir))
	}
	signal := func(sig syscall.Signal) {
		if cgroupDir != "" && sig == syscall.SIGKILL {
			writeCgroupFile(cgroupDir+"/cgroup.kill", "1")
		}
		if GroupAlive(pgid) {
			signalGroup(pgid, sig)
		}
		if cgroupDir != "" {
			for _, pid := range cgroupProcs(cgroupDir) {
				unix.Kill(pid, sig)
			}
		}
	}
	if !gone() {
		signal(syscall.SIGTERM)
		if !waitFor(gone, time.Now().Add(grace)) {
			signal(syscall.SIGKILL)
			waitFor(gone, time.Now().Add(killWait))
		}
	}
	if cgroupDir != "" {
		(&cgroup{dir: cgroupDir, fd: -1}).remove()
	}
}
