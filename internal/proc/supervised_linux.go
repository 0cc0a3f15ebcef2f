//go:build linux

package proc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
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

// spare is a supervisor started before it is needed, with the pipes its
// command will get as its standard streams; it waits for its command on
// the control pipe. Starting the runner binary takes a few milliseconds
// of CPU (the runtime and the package initializers), which a spare spends
// while the runner does other work. A spare exits when the runner does.
type spare struct {
	cmd   *exec.Cmd
	ctl   *os.File // runner → supervisor
	msgs  chan supStatus
	done  chan struct{} // closed once the supervisor has exited
	pipes *commandPipes // the runner's ends (the supervisor has the others)
}

// startSpare starts a supervisor that waits for its command.
func (sc *supervisorConf) startSpare() (*spare, error) {
	p, err := newPipes(true)
	if err != nil {
		return nil, fmt.Errorf("create pipes: %w", err)
	}
	statusR, statusW, err1 := os.Pipe()
	ctlR, ctlW, err2 := os.Pipe()
	closeAll := func() {
		p.closeAll()
		for _, f := range []*os.File{statusR, statusW, ctlR, ctlW} {
			if f != nil {
				f.Close()
			}
		}
	}
	if err := errors.Join(err1, err2); err != nil {
		closeAll()
		return nil, fmt.Errorf("create the supervisor's pipes: %w", err)
	}
	args := []string{sc.arg0, SuperviseArg}
	if sc.noCgroup {
		args = append(args, noCgroupArg)
	}
	cmd := &exec.Cmd{
		Path:       sc.path,
		Args:       args,
		Stdin:      p.child.in,
		Stdout:     p.child.out,
		Stderr:     p.child.err,
		ExtraFiles: []*os.File{statusW, ctlR}, // descriptors 3 and 4
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:   true, // not stopped with the command's group, nor by a terminal's Ctrl-C
			Pdeathsig: parentDeathSignal,
		},
	}
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("start the supervisor: %w", err)
	}
	p.closeChildEnds()
	statusW.Close()
	ctlR.Close()
	sp := &spare{cmd: cmd, ctl: ctlW, msgs: make(chan supStatus, 8), done: make(chan struct{}), pipes: p}
	go func() {
		defer close(sp.msgs)
		defer statusR.Close()
		dec := json.NewDecoder(bufio.NewReader(statusR))
		for {
			var m supStatus
			if dec.Decode(&m) != nil {
				return
			}
			sp.msgs <- m
		}
	}()
	go func() {
		cmd.Wait()
		close(sp.done)
	}()
	return sp, nil
}

// discard makes an unused spare exit (end of file on its control pipe).
func (sp *spare) discard() {
	sp.ctl.Close()
	sp.pipes.closeAll()
}

// take returns a supervisor for a command: the spare if there is one
// still running, else a new one. Either way, the next spare is started.
func (sc *supervisorConf) take() (*spare, error) {
	sc.mu.Lock()
	sp := sc.spare
	sc.spare = nil
	sc.mu.Unlock()
	if sp != nil {
		select {
		case <-sp.done:
			sp.discard()
			sp = nil
		default:
		}
	}
	var err error
	if sp == nil {
		sp, err = sc.startSpare()
	}
	go sc.refill()
	return sp, err
}

// refill starts a spare unless there is one.
func (sc *supervisorConf) refill() {
	sc.mu.Lock()
	has := sc.spare != nil
	sc.mu.Unlock()
	if has {
		return
	}
	sp, err := sc.startSpare()
	if err != nil {
		return
	}
	sc.mu.Lock()
	if sc.spare == nil {
		sc.spare, sp = sp, nil
	}
	sc.mu.Unlock()
	if sp != nil {
		sp.discard()
	}
}

// supervised is a command Run started under the supervisor (see
// supervise_linux.go), seen from the runner.
type supervised struct {
	*spare
	grace  time.Duration
	cmdPid int       // the command's pid and process group
	cgroup string    // the command's cgroup directory, or ""
	start  time.Time // when the start was reported

	mu       sync.Mutex
	why      error // why a stop was asked for, while the command ran
	stopSent bool
	exited   bool // the command's exit has been reported
}

// startSupervised has a supervisor start the command. The program is
// looked up, and the environment made, as os/exec does for a direct
// start, so the command runs exactly as it would without the supervisor.
func startSupervised(runCtx context.Context, sc *supervisorConf, s Spec, grace time.Duration) (child, *commandPipes, error) {
	name := s.Argv[0]
	if err := runCtx.Err(); err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", name, err)
	}
	lookup := exec.Command(name, s.Argv[1:]...)
	lookup.Dir, lookup.Env = s.Dir, s.Env
	if lookup.Err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", name, lookup.Err)
	}
	for _, kv := range s.Env {
		if strings.IndexByte(kv, 0) >= 0 {
			return nil, nil, fmt.Errorf("start %s: exec: environment variable contains NUL", name)
		}
	}
	spec, err := json.Marshal(supSpec{
		Path: lookup.Path, Argv: lookup.Args, Env: lookup.Environ(), Dir: s.Dir, Stdin: s.Stdin != nil,
		Grace: grace, Parent: os.Getpid(),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", name, err)
	}
	// A spare that ended before it was given its command (killed, say)
	// started nothing: another supervisor is tried once.
	var why []string
	for try := 0; try < 2; try++ {
		sp, err := sc.take()
		if err != nil {
			return nil, nil, fmt.Errorf("start %s: %w", name, err)
		}
		if s.Stdin == nil {
			sp.pipes.inW.Close() // the command gets /dev/null
			sp.pipes.inW = nil
		}
		// A write error means the supervisor is gone; its status says more.
		sp.ctl.Write(append(spec, '\n'))
		sv := &supervised{spare: sp, grace: grace}
		for m := range sp.msgs {
			switch {
			case m.Cgroup != "":
				sv.cgroup = m.Cgroup
			case m.NoCgroup != "":
			case m.Errno != 0:
				<-sp.done
				sp.discard()
				return nil, nil, fmt.Errorf("start %s: %w", name, &os.PathError{Op: "fork/exec", Path: lookup.Path, Err: syscall.Errno(m.Errno)})
			case m.Error != "":
				why = append(why, m.Error)
			case m.Started > 0:
				sv.cmdPid, sv.start = m.Started, time.Now()
				go sv.watch(runCtx)
				return sv, sp.pipes, nil
			}
		}
		<-sp.done
		sp.discard()
		why = append(why, sp.cmd.ProcessState.String())
	}
	return nil, nil, fmt.Errorf("start %s: the supervisor ended before starting it: %s", name, strings.Join(why, "; "))
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

// finish waits for the supervisor to say that nothing of the command is
// left (it exits right after). If it does not in time, or ends without
// saying so, the runner stops the command's group and cgroup itself.
func (sv *supervised) finish() {
	t := time.NewTimer(sv.grace + killWait + supervisorSlack)
	defer t.Stop()
	for {
		select {
		case m, ok := <-sv.msgs:
			if ok && !m.Done {
				continue
			}
			sv.ctl.Close()
			if !ok {
				<-sv.done
				stopRemains(sv.cmdPid, sv.cgroup, sv.grace)
			}
			return
		case <-t.C:
			sv.cmd.Process.Kill()
			t.Reset(time.Hour) // the status pipe closes at once
		}
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
