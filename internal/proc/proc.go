//go:build unix

package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/runner-cli/runner/internal/sandbox"
)

// DefaultGrace is the time between SIGTERM and SIGKILL when Spec.Grace is
// zero or negative.
const DefaultGrace = 10 * time.Second

// drainWait bounds how long Run waits, once the process group is gone, for
// the output pipes to reach end of file. Only a process that left the group
// (setsid) and still holds the pipes makes it expire; the runner then
// closes its ends of the pipes and returns.
const drainWait = 2 * time.Second

// killWait bounds the wait for a group to vanish after SIGKILL, which
// cannot be caught; only a process stuck in the kernel delays it.
const killWait = 5 * time.Second

// readBuf is the size of each output pipe's read buffer.
const readBuf = 32 << 10

// Spec describes one command to run.
type Spec struct {
	Argv []string // program and arguments; a bare name is looked up in the runner's $PATH
	Dir  string   // working directory ("" = the runner's)
	Env  []string // environment (nil = the runner's)

	// Stdin is written to the command's standard input from its own
	// goroutine, then stdin is closed. Nil: stdin is empty (/dev/null).
	Stdin []byte

	// Log is the file receiving stdout and stderr combined, written while
	// they are produced ("" = output is drained and counted only). When
	// the output exceeds LogLimit (> 0), the file keeps the head and the
	// tail, with a marker line saying how many bytes were cut between
	// them; the whole file, marker included, stays within LogLimit (limits
	// under 512 bytes may be exceeded by the marker line). Memory used is
	// at most half of LogLimit. LogLimit <= 0 means unlimited.
	Log      string
	LogLimit int64
	// LogAppend appends to Log instead of replacing it; LogLimit then
	// applies to this run's part of the file.
	LogAppend bool

	// Stdout and Stderr, when set, also receive every byte of stdout and
	// of stderr, for example an events file or a TailBuffer (with Log ""
	// they are the only copy). Each is written from its own goroutine. A
	// write error stops further writes to that one (the pipe is still
	// drained) and is reported in Result.OutputErr.
	Stdout io.Writer
	Stderr io.Writer

	// Timeout stops the command after this long; IdleTimeout stops it
	// when it printed nothing on stdout or stderr for this long; zero
	// disables either. Stopping means SIGTERM to the whole process group,
	// Grace (DefaultGrace when <= 0), then SIGKILL.
	Timeout, IdleTimeout, Grace time.Duration

	// OnStart is called right after the command started, before Run waits
	// for it; with Setpgid the group id equals the pid.
	OnStart func(pid, pgid int)

	// ExitFile, when set, receives the command's ExitRecord as soon as
	// its main process is reaped (replaced, not fsynced).
	ExitFile string

	// Confine, when set, runs the command in this room (see package
	// sandbox): it and everything it starts may write only there. The
	// runner's binary starts it (see UseConfinement) once the room's
	// walls stand; with Confine.Namespaces the command's exit status
	// comes through that helper (128+N when signal N killed it, read
	// back as that signal). Where that is not possible (no Landlock, no
	// binary to start, namespaces or a process limit the kernel
	// refuses), Run does not start the command and says why in
	// StartErr: it never runs it with fewer walls than the room asks
	// for.
	Confine *sandbox.Room

	// exe, set by Run for a confined command, is the file executed for
	// Argv (the runner's binary, Argv being sandbox.Wrap's command line).
	exe string
}

// program names the command in messages: for a confined one, the program
// it confines rather than the runner's binary.
func (s *Spec) program() string {
	if s.exe != "" && len(s.Argv) > 4 {
		return s.Argv[4]
	}
	return s.Argv[0]
}

// Result is what happened to the command.
type Result struct {
	ExitCode int           // exit status; -1 when killed by a signal or never started
	Duration time.Duration // from start until the command's main process exited
	TimedOut bool          // stopped because Timeout passed
	Idle     bool          // stopped because of IdleTimeout
	Canceled bool          // stopped because ctx was canceled
	Signal   string        // the signal that killed the main process ("SIGKILL"), or ""
	StartErr error         // the command could not be started (or the log not opened)
	LogBytes int64         // bytes of output received (stdout + stderr)
	CutBytes int64         // bytes left out of the log by the limit

	// OutputErr is the first error writing the log or the Stdout sink.
	// Output is drained regardless; the run itself is not affected.
	OutputErr error
}

var (
	errTimeout = errors.New("timeout")
	errIdle    = errors.New("idle timeout")
)

// Run starts the command in its own process group and waits for it. It
// stops the command on Timeout, IdleTimeout or when ctx is canceled
// (SIGTERM, Grace, SIGKILL). When the main process exits, whatever is left
// of it is stopped the same way, so no stray grandchild outlives the run.
// Under the supervisor (UseSupervisor), "the command" is its process
// group, its cgroup and everything below it, also what left the group and
// the session; otherwise it is the process group. Run returns once that
// is gone and the output is drained (a process that escaped cannot hold
// it for longer than a couple of seconds). Run never panics on a bad
// Spec: a command that cannot start is reported in Result.StartErr.
func Run(ctx context.Context, s Spec) Result {
	res := Result{ExitCode: -1}
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		res.StartErr = errors.New("start command: no program given")
		return res
	}
	if s.Dir != "" {
		// The child's chdir failure would name the program, not the directory.
		if st, err := os.Stat(s.Dir); err != nil || !st.IsDir() {
			if err == nil {
				err = errors.New("not a directory")
			}
			res.StartErr = fmt.Errorf("start %s: working directory: %w", s.Argv[0], err)
			return res
		}
	}
	if s.Confine != nil {
		if err := confineSpec(&s); err != nil {
			res.StartErr = err
			return res
		}
	}
	grace := s.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}

	log, err := openLog(s.Log, s.LogAppend, s.LogLimit)
	if err != nil {
		res.StartErr = err
		return res
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var c child
	var p *commandPipes
	if sc := supervisorConfig.Load(); sc != nil {
		c, p, err = startSupervised(runCtx, sc, s, grace)
	} else {
		c, p, err = startDirect(runCtx, s, grace)
	}
	if err != nil {
		log.Close()
		res.Canceled = ctx.Err() != nil
		res.StartErr = err
		return res
	}
	start := time.Now()
	pid := c.pid()
	pgid := pid
	outR, errR, inW := p.outR, p.errR, p.inW

	var lastOut atomic.Int64 // time of the last output, as nanoseconds since start
	var outErr, errErr error
	var wg sync.WaitGroup
	drain := func(r *os.File, extra io.Writer, name string, sinkErr *error) {
		defer wg.Done()
		buf := make([]byte, readBuf)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				lastOut.Store(int64(time.Since(start)))
				log.Write(buf[:n])
				if extra != nil {
					if _, werr := extra.Write(buf[:n]); werr != nil {
						*sinkErr = fmt.Errorf("write %s copy: %w", name, werr)
						extra = nil
					}
				}
			}
			if err != nil {
				return
			}
		}
	}
	wg.Add(2)
	go drain(outR, s.Stdout, "stdout", &outErr)
	go drain(errR, s.Stderr, "stderr", &errErr)

	stdinDone := make(chan struct{})
	var closeStdin func()
	if inW != nil {
		var once sync.Once
		closeStdin = func() { once.Do(func() { inW.Close() }) }
		go func() {
			defer close(stdinDone)
			// EPIPE (the command stopped reading) is not an error here.
			inW.Write(s.Stdin)
			closeStdin()
		}()
	} else {
		close(stdinDone)
	}

	var timeoutTimer *time.Timer
	if s.Timeout > 0 {
		timeoutTimer = time.AfterFunc(s.Timeout, func() { cancel(errTimeout) })
	}
	exited := make(chan struct{})
	if s.IdleTimeout > 0 {
		go watchIdle(s.IdleTimeout, &lastOut, exited, func() { cancel(errIdle) })
	}

	if s.OnStart != nil {
		s.OnStart(pid, pgid)
	}

	ex := c.wait()
	if _, ok := c.(*direct); ok && ex.err == nil {
		writeExitRecord(s.ExitFile, ex.code, ex.signal, c.cause() != nil, ex.took)
	}
	res.Duration = ex.took
	close(exited)
	if timeoutTimer != nil {
		timeoutTimer.Stop()
	}
	switch {
	case ex.err != nil:
		res.StartErr = fmt.Errorf("wait for %s: %w", s.program(), ex.err)
	case ex.signal != 0:
		res.Signal = signalName(ex.signal)
	default:
		res.ExitCode = ex.code
	}
	switch cause := c.cause(); {
	case cause == nil:
	case errors.Is(cause, errTimeout):
		res.TimedOut = true
	case errors.Is(cause, errIdle):
		res.Idle = true
	default:
		res.Canceled = true
	}

	c.finish()

	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainWait):
		// Closing our read ends makes the blocked reads return.
		outR.Close()
		errR.Close()
		<-drained
	}
	outR.Close()
	errR.Close()
	if closeStdin != nil {
		closeStdin()
	}
	<-stdinDone

	var logErr error
	res.LogBytes, res.CutBytes, logErr = log.Close()
	res.OutputErr = errors.Join(logErr, outErr, errErr)
	return res
}

// stdio are the command's ends of its pipes (in is nil: /dev/null).
type stdio struct{ in, out, err *os.File }

// commandPipes are the pipes of a command: its ends and the runner's.
type commandPipes struct {
	child           stdio
	inW, outR, errR *os.File // inW is nil when the command has no stdin pipe
}

// newPipes creates the pipes of a command, with a stdin pipe or not.
func newPipes(stdin bool) (*commandPipes, error) {
	p := &commandPipes{}
	var err1, err2, err3 error
	p.outR, p.child.out, err1 = os.Pipe()
	p.errR, p.child.err, err2 = os.Pipe()
	if stdin {
		p.child.in, p.inW, err3 = os.Pipe()
	}
	if err := errors.Join(err1, err2, err3); err != nil {
		p.closeAll()
		return nil, err
	}
	return p, nil
}

// closeChildEnds closes the command's ends, once it has them.
func (p *commandPipes) closeChildEnds() {
	for _, f := range []*os.File{p.child.in, p.child.out, p.child.err} {
		if f != nil {
			f.Close()
		}
	}
}

// closeAll closes every end (the command could not start).
func (p *commandPipes) closeAll() {
	p.closeChildEnds()
	for _, f := range []*os.File{p.inW, p.outR, p.errR} {
		if f != nil {
			f.Close()
		}
	}
}

// child is a command Run started, directly (startDirect) or under the
// supervisor (startSupervised).
type child interface {
	pid() int // the command's pid, also its process group id
	// wait returns once the command's main process has exited.
	wait() exitStatus
	// cause is why the command was stopped (Cmd.Cancel), or nil.
	cause() error
	// finish returns once nothing of the command is left running: what
	// is left is stopped (SIGTERM unless already sent, the rest of the
	// grace period, SIGKILL).
	finish()
}

// exitStatus is how the command's main process ended.
type exitStatus struct {
	code   int            // exit status, when not killed by a signal
	signal syscall.Signal // the signal that killed it, or 0
	took   time.Duration  // from its start to its exit
	err    error          // no status could be had
}

// helperStatus is the status of a command from its main process's exit
// code: for a command confined in namespaces (inNamespaces), whose helper is the
// first process of the room's PID namespace and passes on a signal N
// that killed the command as 128+N (no signal of its own can end it),
// that signal, so that a confined command killed reads as an unconfined
// one does ("killed by SIGTERM", not "exit status 143").
func helperStatus(inNamespaces bool, code int) (int, syscall.Signal) {
	if inNamespaces && code > 128 && code <= 128+64 {
		return 0, syscall.Signal(code - 128)
	}
	return code, 0
}

// watchIdle calls stop when no output arrived for idle, until exited is
// closed.
func watchIdle(idle time.Duration, lastOut *atomic.Int64, exited <-chan struct{}, stop func()) {
	start := time.Now()
	t := time.NewTimer(idle)
	defer t.Stop()
	for {
		select {
		case <-exited:
			return
		case <-t.C:
			since := time.Since(start) - time.Duration(lastOut.Load())
			if since >= idle {
				stop()
				return
			}
			t.Reset(idle - since)
		}
	}
}
