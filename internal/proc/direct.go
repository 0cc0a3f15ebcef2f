//go:build unix

package proc

import (
	"context"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/runner-cli/runner/internal/sandbox"
)

// direct is a command started by Run itself (without the supervisor): its
// process group is what Run stops.
type direct struct {
	cmd          *exec.Cmd
	st           *stopper
	start        time.Time
	inNamespaces bool // started as the first process of a room's namespaces
}

func (d *direct) pid() int { return d.cmd.Process.Pid }

func (d *direct) wait() exitStatus {
	err := d.cmd.Wait()
	ex := exitStatus{took: time.Since(d.start)}
	ps := d.cmd.ProcessState
	if ps == nil {
		ex.err = err
		return ex
	}
	ws, _ := ps.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		ex.signal = ws.Signal()
	} else {
		ex.code, ex.signal = helperStatus(d.inNamespaces, ps.ExitCode())
	}
	return ex
}

func (d *direct) cause() error { return d.st.cause() }

func (d *direct) finish() { d.st.finish(d.pid()) }

// startDirect starts the command as the runner's own child, in a process
// group of its own.
func startDirect(runCtx context.Context, s Spec, grace time.Duration) (child, *commandPipes, error) {
	p, err := newPipes(s.Stdin != nil)
	if err != nil {
		return nil, nil, fmt.Errorf("start %s: create pipes: %w", s.program(), err)
	}
	cmd := exec.CommandContext(runCtx, s.Argv[0], s.Argv[1:]...)
	if s.exe != "" {
		cmd = exec.CommandContext(runCtx, s.exe, s.Argv[1:]...)
		cmd.Args[0] = s.Argv[0]
	}
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	cmd.Stdout = p.child.out
	cmd.Stderr = p.child.err
	if p.child.in != nil {
		cmd.Stdin = p.child.in
	}
	cmd.SysProcAttr = sysProcAttr()
	if s.Confine != nil {
		sandbox.Clone(*s.Confine, cmd.SysProcAttr)
	}
	// The pipes are *os.File, so exec starts no copying goroutines; the
	// delay is a backstop that kills the main process if it outlives the
	// group-wide SIGKILL scheduled by Cancel.
	cmd.WaitDelay = grace + killWait
	st := &stopper{grace: grace}
	cmd.Cancel = func() error {
		st.stop(cmd.Process.Pid, context.Cause(runCtx))
		return nil
	}
	if err := cmd.Start(); err != nil {
		p.closeAll()
		return nil, nil, fmt.Errorf("start %s: %w", s.program(), err)
	}
	p.closeChildEnds()
	return &direct{cmd: cmd, st: st, start: time.Now(), inNamespaces: s.Confine != nil && s.Confine.Namespaces != ""}, p, nil
}

// stopper carries out Cmd.Cancel (SIGTERM to the group now, SIGKILL after
// the grace period) and, after the main process exited, makes sure the
// group is gone.
type stopper struct {
	grace time.Duration

	mu        sync.Mutex
	why       error
	termAt    time.Time
	killTimer *time.Timer
}

func (s *stopper) stop(pgid int, cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.termAt.IsZero() {
		return
	}
	s.why = cause
	s.termAt = time.Now()
	signalGroup(pgid, syscall.SIGTERM)
	s.killTimer = time.AfterFunc(s.grace, func() { signalGroup(pgid, syscall.SIGKILL) })
}

func (s *stopper) cause() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.why
}

// finish stops whatever is left of the group once the main process has
// exited: SIGTERM unless already sent, the rest of the grace period, then
// SIGKILL.
func (s *stopper) finish(pgid int) {
	s.mu.Lock()
	termAt, kt := s.termAt, s.killTimer
	s.mu.Unlock()
	if kt != nil {
		defer kt.Stop()
	}
	if !GroupAlive(pgid) {
		return
	}
	if termAt.IsZero() {
		signalGroup(pgid, syscall.SIGTERM)
		termAt = time.Now()
	}
	if waitGone(pgid, termAt.Add(s.grace)) {
		return
	}
	signalGroup(pgid, syscall.SIGKILL)
	waitGone(pgid, time.Now().Add(killWait))
}
