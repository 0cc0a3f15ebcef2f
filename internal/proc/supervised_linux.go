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

	"github.com/runner-cli/runner/internal/fsutil"
)

// supervisorSlack is how much longer than its own grace period and
// killWait the runner gives a supervisor before it kills it and stops
// what is left itself.
const supervisorSlack = time.Second

// supervisorProc is a supervisor process (see supervise_linux.go), seen
// from the runner. It runs one command at a time; between commands it
// waits in the pool of its supervisorConf.
type supervisorProc struct {
	cmd  *exec.Cmd
	conn *sockConn
	msgs chan supStatus // closed when the socket is
	done chan struct{}  // closed once the process has exited
}

// startSupervisor starts a supervisor process.
func (sc *supervisorConf) startSupervisor() (*supervisorProc, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("create the supervisor's socket: %w", err)
	}
	theirs := os.NewFile(uintptr(fds[1]), "runner")
	defer theirs.Close()
	conn, err := newSockConn(fds[0], "supervisor")
	if err != nil {
		unix.Close(fds[0])
		return nil, fmt.Errorf("create the supervisor's socket: %w", err)
	}
	args := []string{sc.arg0, SuperviseArg}
	if sc.noCgroup {
		args = append(args, noCgroupArg)
	}
	args = append(args, sc.pids.args()...)
	cmd := &exec.Cmd{
		Path:       sc.path,
		Args:       args,
		ExtraFiles: []*os.File{theirs}, // descriptor 3
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid:   true, // not stopped with a command's group, nor by a terminal's Ctrl-C
			Pdeathsig: parentDeathSignal,
		},
	}
	if err := cmd.Start(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("start the supervisor: %w", err)
	}
	sp := &supervisorProc{cmd: cmd, conn: conn, msgs: make(chan supStatus, 8), done: make(chan struct{})}
	go func() {
		defer close(sp.msgs)
		dec := json.NewDecoder(bufio.NewReader(conn))
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

// exited reports whether the supervisor process has ended.
func (sp *supervisorProc) exited() bool {
	select {
	case <-sp.done:
		return true
	default:
		return false
	}
}

// discard makes a supervisor exit: end of file on its socket.
func (sp *supervisorProc) discard() { sp.conn.Close() }

// take returns a waiting supervisor from the pool, or starts one.
func (sc *supervisorConf) take() (*supervisorProc, error) {
	sc.mu.Lock()
	for len(sc.idle) > 0 {
		sp := sc.idle[len(sc.idle)-1]
		sc.idle = sc.idle[:len(sc.idle)-1]
		if !sp.exited() {
			sc.mu.Unlock()
			return sp, nil
		}
		sp.discard()
	}
	sc.mu.Unlock()
	return sc.startSupervisor()
}

// put gives a supervisor whose command is over back to the pool.
func (sc *supervisorConf) put(sp *supervisorProc) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.idle = append(sc.idle, sp)
}

// warm starts a supervisor for the pool, so that the first command does
// not wait for one.
func (sc *supervisorConf) warm() {
	if sp, err := sc.startSupervisor(); err == nil {
		sc.put(sp)
	}
}

// supervised is a command Run started under a supervisor.
type supervised struct {
	*supervisorProc
	sc     *supervisorConf
	grace  time.Duration
	cmdPid int       // the command's pid and process group
	cgroup string    // the command's cgroup directory, or ""
	start  time.Time // when the start was reported
	ended  chan struct{}

	mu       sync.Mutex
	why      error // why a stop was asked for, while the command ran
	stopSent bool
	exited   bool // the command's exit has been reported
	over     bool // finish returned
}

// startSupervised has a supervisor start the command. The program is
// looked up, and the environment made, as os/exec does for a direct
// start, so the command runs exactly as it would without the supervisor.
// The command's ends of its pipes go to the supervisor, which passes them
// on as they are.
func startSupervised(runCtx context.Context, sc *supervisorConf, s Spec, grace time.Duration) (child, *commandPipes, error) {
	name := s.program()
	if err := runCtx.Err(); err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", name, err)
	}
	lookup := exec.Command(s.Argv[0], s.Argv[1:]...)
	if s.exe != "" {
		lookup = exec.Command(s.exe, s.Argv[1:]...)
		lookup.Args[0] = s.Argv[0]
	}
	lookup.Dir, lookup.Env = s.Dir, s.Env
	if lookup.Err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", name, lookup.Err)
	}
	for _, kv := range s.Env {
		if strings.IndexByte(kv, 0) >= 0 {
			return nil, nil, fmt.Errorf("start %s: exec: environment variable contains NUL", name)
		}
	}
	sup := supSpec{Path: lookup.Path, Argv: lookup.Args, Env: lookup.Environ(), Dir: s.Dir, Grace: grace, ExitFile: s.ExitFile}
	if s.Confine != nil {
		sup.Namespaces, sup.MaxProcesses = s.Confine.Namespaces, s.Confine.MaxProcesses
	}
	if dir, ok := fsutil.ConfinedRoot(s.ExitFile); ok && s.ExitFile != "" {
		sup.ConfineDir = dir
	}
	spec, err := json.Marshal(sup)
	if err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", name, err)
	}
	spec = append(spec, '\n')
	p, err := newPipes(s.Stdin != nil)
	if err != nil {
		return nil, nil, fmt.Errorf("start %s: create pipes: %w", name, err)
	}
	fds := []int{int(p.child.out.Fd()), int(p.child.err.Fd())}
	if p.child.in != nil {
		fds = append(fds, int(p.child.in.Fd()))
	}
	// A supervisor that ended before it started the command (killed,
	// say) started nothing: a new one is tried once.
	var why []string
	for try := 0; try < 2; try++ {
		take := sc.take
		if try > 0 {
			take = sc.startSupervisor
		}
		sp, err := take()
		if err != nil {
			p.closeAll()
			return nil, nil, fmt.Errorf("start %s: %w", name, err)
		}
		// The descriptors go with the line's first bytes; a write error
		// means the supervisor is gone, which its status shows.
		if n, err := sp.conn.WriteMsg(spec, unix.UnixRights(fds...)); err == nil && n < len(spec) {
			sp.conn.Write(spec[n:])
		}
		sv := &supervised{supervisorProc: sp, sc: sc, grace: grace, ended: make(chan struct{})}
		for m := range sp.msgs {
			switch {
			case m.Cgroup != "":
				sv.cgroup = m.Cgroup
			case m.NoCgroup != "":
			case m.Refused != "":
				p.closeAll()
				sc.put(sp)
				return nil, nil, fmt.Errorf("start %s: %s", name, m.Refused)
			case m.Errno != 0:
				p.closeAll()
				sc.put(sp)
				return nil, nil, fmt.Errorf("start %s: %w", name, &os.PathError{Op: "fork/exec", Path: lookup.Path, Err: syscall.Errno(m.Errno)})
			case m.Error != "":
				why = append(why, m.Error)
			case m.Started > 0:
				p.closeChildEnds()
				sv.cmdPid, sv.start = m.Started, time.Now()
				go sv.watch(runCtx)
				return sv, p, nil
			}
		}
		<-sp.done
		sp.discard()
		why = append(why, sp.cmd.ProcessState.String())
	}
	p.closeAll()
	return nil, nil, fmt.Errorf("start %s: the supervisor ended before starting it: %s", name, strings.Join(why, "; "))
}

func (sv *supervised) pid() int { return sv.cmdPid }

// watch asks the supervisor to stop the command when runCtx is done, and
// kills the supervisor if it does not finish in time.
func (sv *supervised) watch(runCtx context.Context) {
	select {
	case <-sv.ended:
		return
	case <-runCtx.Done():
	}
	sv.requestStop(context.Cause(runCtx))
	t := time.NewTimer(sv.grace + killWait + supervisorSlack)
	defer t.Stop()
	select {
	case <-sv.ended:
	case <-t.C:
		sv.cmd.Process.Kill()
	}
}

// requestStop asks the supervisor to stop the command (SIGTERM, grace,
// SIGKILL); cause is kept when the command is still running.
func (sv *supervised) requestStop(cause error) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.over {
		return
	}
	if !sv.exited && sv.why == nil {
		sv.why = cause
	}
	if !sv.stopSent {
		sv.stopSent = true
		sv.conn.Write([]byte("stop\n"))
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
		ex.took = time.Since(sv.start)
	}
	sv.mu.Lock()
	sv.exited = true
	sv.mu.Unlock()
	return ex
}

// finish waits for the supervisor to say that nothing of the command is
// left, and gives it back to the pool. If it does not in time, or ends
// without saying so, the runner stops the command's group and cgroup
// itself.
func (sv *supervised) finish() {
	t := time.NewTimer(sv.grace + killWait + supervisorSlack)
	defer t.Stop()
	done := false
	for waiting := true; waiting; {
		select {
		case m, ok := <-sv.msgs:
			done = ok && m.Done
			waiting = ok && !done
		case <-t.C:
			sv.cmd.Process.Kill() // its socket closes, and msgs with it
		}
	}
	sv.mu.Lock()
	sv.over = true
	sv.mu.Unlock()
	close(sv.ended)
	if done {
		sv.sc.put(sv.supervisorProc)
		return
	}
	sv.discard()
	<-sv.done
	stopRemains(sv.cmdPid, sv.cgroup, sv.grace)
}

// stopRemains stops what a supervisor that died left of its command: the
// process group and the processes of the cgroup (SIGTERM, grace,
// SIGKILL). What left both is found later, by environment (see
// GroupsWithEnv).
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
