//go:build linux

package proc

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The supervisor is the runner binary started as `runner __supervise`,
// the runner's direct child. It starts one command and stays its parent:
//
//	runner ── supervisor (own process group, parent-death signal, child subreaper)
//	            └── command (own process group, own cgroup v2 where possible,
//	                 parent-death signal SIGKILL)
//	                  └── whatever it starts, also after it left the group,
//	                      the session and the environment
//
// The runner starts a supervisor before it needs one (a spare), with the
// pipes the command will get as its standard streams, and the supervisor
// passes them on as they are; once the command runs, the supervisor
// points its own stdin and stdout at /dev/null, so only the command's
// side holds the runner's pipes (stderr stays, so that a supervisor crash
// is seen in the log). File descriptor 4 brings the command (supSpec, one
// JSON line), then any line asks for a stop; end of file on it means the
// runner is gone (a spare then just exits). File descriptor 3 carries
// status messages to the runner, one JSON object a line (supStatus).
//
// Stopping is SIGTERM to everything of the command, then SIGKILL to what
// is left after the grace period; "everything" is the command's process
// group, every process in its cgroup (SIGKILL through cgroup.kill) and
// every live process below the supervisor, which, being a child
// subreaper, inherits whatever the command's processes orphan. A stop
// starts when the runner asks, when the runner dies (end of file on 4,
// or the parent-death signal with a changed parent), on SIGTERM, SIGINT
// or SIGHUP, and when the command has exited but left something running.
// The supervisor exits once the command has exited and nothing of it is
// left, after removing the cgroup.

// SuperviseArg is the argument that makes the runner binary play the
// supervisor (see UseSupervisor).
const SuperviseArg = "__supervise"

// noCgroupArg, after SuperviseArg, tells the supervisor not to try to
// create a cgroup (the runner found it cannot).
const noCgroupArg = "no-cgroup"

const (
	supStatusFD  = 3
	supControlFD = 4
)

// parentDeathSignal is the supervisor's parent-death signal. The kernel
// sends it when the thread that started the supervisor ends, which is not
// always the runner's death, so the supervisor checks its parent before
// acting on it.
const parentDeathSignal = syscall.SIGUSR1

// killRepeat is how often the supervisor sends SIGKILL again to what
// survived the first one (a process can fork until it gets it).
const killRepeat = 100 * time.Millisecond

// supSpec is the command the runner asks the supervisor to run.
type supSpec struct {
	Path   string        `json:"path"` // resolved by the runner, as os/exec does
	Argv   []string      `json:"argv"`
	Env    []string      `json:"env"`
	Dir    string        `json:"dir,omitempty"`
	Stdin  bool          `json:"stdin,omitempty"` // false: /dev/null instead of the stdin pipe
	Grace  time.Duration `json:"grace"`
	Parent int           `json:"parent"` // the runner's pid
}

// supStatus is one message from the supervisor to the runner.
type supStatus struct {
	Cgroup   string        `json:"cgroup,omitempty"`    // the command's cgroup directory
	NoCgroup string        `json:"no_cgroup,omitempty"` // why the command has none
	Started  int           `json:"started,omitempty"`   // the command's pid (and process group)
	Errno    int           `json:"errno,omitempty"`     // the command could not be started
	Error    string        `json:"error,omitempty"`     // the supervisor failed
	Exited   bool          `json:"exited,omitempty"`    // the command's main process has exited:
	Code     int           `json:"code,omitempty"`      // with this exit status,
	Signal   int           `json:"signal,omitempty"`    // or killed by this signal,
	Took     time.Duration `json:"took,omitempty"`      // this long after it started
	Done     bool          `json:"done,omitempty"`      // nothing of the command is left
}

// Supervise runs the supervisor in this process and returns its exit
// status: 0 once the command and everything it started are gone, 1 when
// it could not get its command or something survived SIGKILL, 2 on an
// internal error (reported on descriptor 3 when possible). args are the
// arguments after SuperviseArg.
func Supervise(args []string) (code int) {
	// The command's parent-death signal fires when the thread that forked
	// it ends: the main goroutine keeps its thread until the process exits.
	runtime.LockOSThread()
	syscall.CloseOnExec(supStatusFD)
	syscall.CloseOnExec(supControlFD)
	out := &statusWriter{enc: json.NewEncoder(os.NewFile(supStatusFD, "status"))}
	defer func() {
		if p := recover(); p != nil {
			out.send(supStatus{Error: fmt.Sprintf("supervisor: %v", p)})
			code = 2
		}
	}()
	// Not a name `pkill runner` matches: a supervisor is what stops the
	// command when the runner is killed, so it must outlive the runner.
	os.WriteFile("/proc/self/comm", []byte("supervise"), 0)

	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, syscall.SIGCHLD)
	for _, s := range []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, parentDeathSignal} {
		// A signal the runner was started with ignored stays ignored, so
		// that the command inherits it ignored as it would from the runner.
		if !signal.Ignored(s) {
			signal.Notify(sigs, s)
		}
	}
	subreaper := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	self := os.Getpid()
	// The cgroup is made while the supervisor waits for its command.
	var cg *cgroup
	var cgErr error
	if !slices.Contains(args, noCgroupArg) {
		cg, cgErr = newCgroup(cgroupPrefix + strconv.Itoa(self))
	}

	ctl := bufio.NewReader(os.NewFile(supControlFD, "control"))
	line, err := ctl.ReadBytes('\n')
	var spec supSpec
	if err == nil {
		err = json.Unmarshal(line, &spec)
	}
	if err == nil && os.Getppid() != spec.Parent {
		err = errors.New("the runner is gone") // it died before the command could start
	}
	if err != nil {
		if cg != nil {
			cg.remove()
		}
		out.send(supStatus{Error: fmt.Sprintf("supervisor: read the command: %v", err)})
		return 1
	}
	if spec.Grace <= 0 {
		spec.Grace = DefaultGrace
	}
	if !spec.Stdin {
		if null, err := unix.Open(os.DevNull, unix.O_RDONLY, 0); err == nil {
			unix.Dup3(null, 0, 0)
			unix.Close(null)
		}
	}
	sv := &supervisor{spec: spec, out: out, self: self, cg: cg}
	if subreaper != nil {
		out.send(supStatus{Error: fmt.Sprintf("supervisor: become a child subreaper: %v", subreaper)})
	}
	if cgErr != nil {
		out.send(supStatus{NoCgroup: cgErr.Error()})
	}
	if !sv.start() {
		return 0
	}
	return sv.loop(ctl, sigs)
}

// statusWriter sends messages to the runner; once the runner is gone,
// they are dropped.
type statusWriter struct {
	enc    *json.Encoder
	broken bool
}

func (w *statusWriter) send(m supStatus) {
	if !w.broken && w.enc.Encode(m) != nil {
		w.broken = true
	}
}

// supervisor is the state of the supervisor process.
type supervisor struct {
	spec supSpec
	out  *statusWriter
	self int
	cg   *cgroup // nil: none could be created

	pid     int // the command
	started time.Time
	exited  bool // the command's main process has been reaped

	stopping bool
	killAt   time.Time // when SIGKILL follows the SIGTERM
	lastKill time.Time
}

// start starts the command, in the cgroup if there is one, and reports
// both. It returns false when the command could not be started.
func (sv *supervisor) start() bool {
	cg := sv.cg
	pid, err := sv.spawn(cg)
	if err != nil && cg != nil {
		// clone3 into a cgroup can be refused (an old kernel, a cgroup
		// the runner may not move processes into): start without it.
		if pid2, err2 := sv.spawn(nil); err2 == nil {
			sv.out.send(supStatus{NoCgroup: fmt.Sprintf("start in cgroup %s: %v", cg.dir, err)})
			cg.remove()
			cg, pid, err = nil, pid2, nil
		}
	}
	if err != nil {
		errno := syscall.EINVAL
		errors.As(err, &errno)
		sv.out.send(supStatus{Errno: int(errno), Error: err.Error()})
		if cg != nil {
			cg.remove()
		}
		return false
	}
	sv.started = time.Now()
	sv.cg, sv.pid = cg, pid
	if cg != nil {
		sv.out.send(supStatus{Cgroup: cg.dir})
	}
	sv.out.send(supStatus{Started: pid})
	// Only the command's side holds the runner's stdin and stdout now.
	if null, err := unix.Open(os.DevNull, unix.O_RDWR, 0); err == nil {
		unix.Dup3(null, 0, 0)
		unix.Dup3(null, 1, 0)
		unix.Close(null)
	}
	return true
}

func (sv *supervisor) spawn(cg *cgroup) (int, error) {
	sys := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if cg != nil {
		sys.UseCgroupFD, sys.CgroupFD = true, cg.fd
	}
	return syscall.ForkExec(sv.spec.Path, sv.spec.Argv, &syscall.ProcAttr{
		Dir: sv.spec.Dir, Env: sv.spec.Env, Files: []uintptr{0, 1, 2}, Sys: sys,
	})
}

// loop reaps, stops when asked, and returns once the command and all it
// started are gone (0) or something survived SIGKILL for killWait (1).
func (sv *supervisor) loop(ctl *bufio.Reader, sigs <-chan os.Signal) int {
	stopReq := make(chan struct{}, 1)
	go func() {
		for {
			_, err := ctl.ReadBytes('\n')
			select {
			case stopReq <- struct{}{}:
			default:
			}
			if err != nil {
				return // the runner is gone
			}
		}
	}()
	var tick <-chan time.Time
	code := 0
	for {
		select {
		case s := <-sigs:
			switch s {
			case syscall.SIGCHLD:
			case parentDeathSignal:
				if os.Getppid() != sv.spec.Parent {
					sv.stop()
				}
			default:
				sv.stop()
			}
		case <-stopReq:
			sv.stop()
		case <-tick:
		}
		children := sv.reap()
		if sv.exited && !children && (sv.cg == nil || !sv.cg.populated()) {
			break
		}
		if sv.exited {
			sv.stop() // what the command left running
		}
		if !sv.stopping {
			continue
		}
		if tick == nil {
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			tick = t.C
		}
		if sv.escalate() && sv.exited {
			code = 1
			break
		}
	}
	if code == 0 {
		sv.out.send(supStatus{Done: true})
	}
	if sv.cg != nil {
		sv.cg.remove() // empty: only its directory is left
	}
	return code
}

// reap collects every child that exited, reports the command's exit, and
// says whether children are left.
func (sv *supervisor) reap() (children bool) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return err == nil // 0: children, none exited; ECHILD: none
		}
		if pid != sv.pid || sv.exited {
			continue
		}
		sv.exited = true
		m := supStatus{Exited: true, Took: time.Since(sv.started)}
		if ws.Signaled() {
			m.Signal = int(ws.Signal())
		} else {
			m.Code = ws.ExitStatus()
		}
		sv.out.send(m)
	}
}

// stop starts stopping the command (once): SIGTERM now, SIGKILL after the
// grace period (see escalate).
func (sv *supervisor) stop() {
	if sv.stopping {
		return
	}
	sv.stopping = true
	sv.killAt = time.Now().Add(sv.spec.Grace)
	sv.signalAll(syscall.SIGTERM)
}

// escalate sends SIGKILL once the grace period is over, and again every
// killRepeat; it reports whether killWait has passed since the first.
func (sv *supervisor) escalate() (gaveUp bool) {
	now := time.Now()
	if now.Before(sv.killAt) {
		return false
	}
	if now.Sub(sv.lastKill) >= killRepeat {
		sv.lastKill = now
		sv.signalAll(syscall.SIGKILL)
	}
	return now.Sub(sv.killAt) > killWait
}

// signalAll sends sig once to every live process of the command: its
// process group as a whole, then each process of its cgroup and below the
// supervisor that is not in that group. SIGKILL also goes through
// cgroup.kill, which reaches processes forked meanwhile.
func (sv *supervisor) signalAll(sig syscall.Signal) {
	if sv.cg != nil && sig == syscall.SIGKILL {
		sv.cg.kill()
	}
	table := processTable()
	targets := descendants(table, sv.self)
	if sv.cg != nil {
		targets = append(targets, sv.cg.procs()...)
	}
	// The group's id is the command's pid, which stays reserved while the
	// command is unreaped or the group has a member.
	group := !sv.exited
	for _, pid := range targets {
		if st, ok := table[pid]; ok && !st.dead() && st.pgrp == sv.pid {
			group = true
		}
	}
	if group {
		signalGroup(sv.pid, sig)
	}
	sent := map[int]bool{sv.self: true}
	for _, pid := range targets {
		st, known := table[pid]
		if sent[pid] || (known && (st.dead() || st.pgrp == sv.pid)) {
			continue
		}
		sent[pid] = true
		unix.Kill(pid, sig)
	}
}
