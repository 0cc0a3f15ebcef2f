//go:build linux

package proc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The supervisor is the runner binary started as `runner __supervise`,
// the runner's direct child. It runs the runner's commands, one at a
// time, and stays their parent:
//
//	runner ── supervisor (own process group, parent-death signal, child subreaper)
//	            └── command (own process group, own cgroup v2 where possible,
//	                 parent-death signal SIGKILL)
//	                  └── whatever it starts, also after it left the group,
//	                      the session and the environment
//
// File descriptor 3 is a unix stream socket to the runner. The runner
// sends a command as one JSON line (supSpec) with the command's ends of
// its pipes attached (SCM_RIGHTS: stdout, stderr, and stdin when it has
// one), which the supervisor passes on to the command as they are and
// then closes; any other line asks to stop the command under way. The
// supervisor answers with JSON lines (supStatus): its cgroup, the
// command's pid or why it could not start, its exit, and "done" once
// nothing of it is left. End of file means the runner is gone.
//
// Stopping is SIGTERM to everything of the command, then SIGKILL to what
// is left after the grace period; "everything" is the command's process
// group, every process in the cgroup (SIGKILL through cgroup.kill) and
// every live process below the supervisor, which, being a child
// subreaper, inherits whatever the command's processes orphan. A stop
// starts when the runner asks, when the runner dies (end of file, or the
// parent-death signal with a changed parent), on SIGTERM, SIGINT or
// SIGHUP, and when the command has exited but left something running.
// The supervisor exits once the runner is gone and nothing of its command
// is left, after removing its cgroup; between commands it holds nothing
// but that empty cgroup and waits.

// SuperviseArg is the argument that makes the runner binary play the
// supervisor (see UseSupervisor).
const SuperviseArg = "__supervise"

// noCgroupArg, after SuperviseArg, tells the supervisor not to try to
// create a cgroup (the runner found it cannot).
const noCgroupArg = "no-cgroup"

// supSocketFD is the supervisor's socket to the runner.
const supSocketFD = 3

// parentDeathSignal is the supervisor's parent-death signal. The kernel
// sends it when the thread that started the supervisor ends, which is not
// always the runner's death, so the supervisor checks its parent before
// acting on it.
const parentDeathSignal = syscall.SIGUSR1

// killRepeat is how often the supervisor sends SIGKILL again to what
// survived the first one (a process can fork until it gets it).
const killRepeat = 100 * time.Millisecond

// supSpec is a command the runner asks the supervisor to run.
type supSpec struct {
	Path  string        `json:"path"` // resolved by the runner, as os/exec does
	Argv  []string      `json:"argv"`
	Env   []string      `json:"env"`
	Dir   string        `json:"dir,omitempty"`
	Grace time.Duration `json:"grace"`
	// ExitFile receives the command's ExitRecord when it is reaped, below
	// ConfineDir (written without following links, see fsutil.Confine).
	ExitFile   string `json:"exit_file,omitempty"`
	ConfineDir string `json:"confine_dir,omitempty"`
	// Namespaces, for a confined command, are those its confinement
	// helper starts in (sandbox.Clone); MaxProcesses bounds its
	// processes (limitPids).
	Namespaces   string `json:"namespaces,omitempty"`
	MaxProcesses int    `json:"max_processes,omitempty"`
}

// supStatus is one message from the supervisor to the runner.
type supStatus struct {
	Cgroup   string        `json:"cgroup,omitempty"`    // the command's cgroup directory
	NoCgroup string        `json:"no_cgroup,omitempty"` // why the command has none
	Started  int           `json:"started,omitempty"`   // the command's pid (and process group)
	Errno    int           `json:"errno,omitempty"`     // the command could not be started
	Refused  string        `json:"refused,omitempty"`   // the command was not started: why
	Error    string        `json:"error,omitempty"`     // the supervisor failed
	Exited   bool          `json:"exited,omitempty"`    // the command's main process has exited:
	Code     int           `json:"code,omitempty"`      // with this exit status,
	Signal   int           `json:"signal,omitempty"`    // or killed by this signal,
	Took     time.Duration `json:"took,omitempty"`      // this long after it started
	Done     bool          `json:"done,omitempty"`      // nothing of the command is left
}

// request is what the runner sent: a command with its pipe ends, or a
// stop.
type request struct {
	spec *supSpec
	fds  []int
}

// Supervise runs the supervisor in this process and returns its exit
// status: 0 once the runner is gone and nothing of a command is left, 1
// when something survived SIGKILL or the runner could not be heard, 2 on
// an internal error (reported to the runner when possible). args are the
// arguments after SuperviseArg.
func Supervise(args []string) (code int) {
	// A command's parent-death signal fires when the thread that forked
	// it ends: the main goroutine keeps its thread until the process exits.
	runtime.LockOSThread()
	conn, err := runnerSocket()
	if err != nil {
		fmt.Fprintf(os.Stderr, "runner %s: descriptor %d is not the runner's socket: %v\n", SuperviseArg, supSocketFD, err)
		return 1
	}
	out := &statusWriter{enc: json.NewEncoder(conn)}
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
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	sv := &supervisor{out: out, self: os.Getpid(), parent: os.Getppid(), sigs: sigs, reqs: make(chan request, 8)}
	sv.useCgroups = !slices.Contains(args, noCgroupArg)
	sv.pids = pidsLimiterFromArgs(args)
	sv.nextCgroup()
	go readRequests(conn, sv.reqs)

	code = sv.serve()
	if sv.cg != nil {
		sv.cg.remove() // empty: only its directory is left
	}
	return code
}

// runnerSocket takes the socket to the runner (descriptor supSocketFD)
// over, moved to a descriptor of its own that commands do not inherit.
func runnerSocket() (*sockConn, error) {
	fd, err := unix.FcntlInt(supSocketFD, unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	unix.Close(supSocketFD)
	conn, err := newSockConn(fd, "runner")
	if err != nil {
		unix.Close(fd)
	}
	return conn, err
}

// nextCgroup replaces the cgroup of the last command, now empty, with a
// new one for the next. A cgroup is never used twice: on Linux 6.18 a
// process started (clone3 with CLONE_INTO_CGROUP) into a cgroup that
// cgroup.kill was once written to is killed as it is born.
func (sv *supervisor) nextCgroup() {
	if sv.cg != nil {
		sv.cg.remove()
		sv.cg = nil
	}
	if !sv.useCgroups {
		return
	}
	sv.cgroups++
	cg, err := newCgroup(fmt.Sprintf("%s%d-%d", cgroupPrefix, sv.self, sv.cgroups))
	if err != nil {
		sv.noCgroup = err.Error()
		sv.useCgroups = false // it will not work better for the next
		return
	}
	sv.cg = cg
}

// readRequests reads the runner's lines and the descriptors sent with
// them, until end of file; then it closes reqs.
func readRequests(conn *sockConn, reqs chan<- request) {
	defer close(reqs)
	var pending []byte
	var fdSets [][]int
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, err := conn.ReadMsg(buf, oob)
		if oobn > 0 {
			if msgs, perr := unix.ParseSocketControlMessage(oob[:oobn]); perr == nil {
				for _, m := range msgs {
					if fds, perr := unix.ParseUnixRights(&m); perr == nil {
						fdSets = append(fdSets, fds)
					}
				}
			}
		}
		pending = append(pending, buf[:n]...)
		for {
			i := bytes.IndexByte(pending, '\n')
			if i < 0 {
				break
			}
			line := pending[:i]
			pending = pending[i+1:]
			if !bytes.HasPrefix(line, []byte("{")) {
				reqs <- request{} // a stop
				continue
			}
			r := request{spec: new(supSpec)}
			if len(fdSets) > 0 {
				r.fds, fdSets = fdSets[0], fdSets[1:]
			}
			if json.Unmarshal(line, r.spec) != nil {
				r.spec = nil
			}
			reqs <- r
		}
		if err != nil || n == 0 {
			for _, fds := range fdSets {
				closeFDs(fds)
			}
			return
		}
	}
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
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
	out    *statusWriter
	self   int
	parent int // the runner
	// cg is the cgroup the next command starts in; nil when none could
	// be made (noCgroup says why) or none is wanted (useCgroups false).
	cg         *cgroup
	useCgroups bool
	noCgroup   string
	cgroups    int // made so far, for their names
	// pids is how the commands' processes are limited; pidsCgroups
	// counts the cgroups v1 made for it, for their names.
	pids        pidsLimiter
	pidsCgroups int
	sigs        <-chan os.Signal
	reqs        chan request
	gone        bool // the runner is gone (end of file, or its death signal)
}

// serve runs the runner's commands one after another until the runner is
// gone.
func (sv *supervisor) serve() int {
	for !sv.gone {
		select {
		case r, ok := <-sv.reqs:
			switch {
			case !ok:
				sv.gone = true
			case r.spec == nil:
				closeFDs(r.fds) // a stop with nothing running, or a bad line
			default:
				if code := sv.run(r); code != 0 {
					return code
				}
			}
		case s := <-sv.sigs:
			sv.signaled(s)
		}
	}
	return 0
}

// signaled notes a signal: SIGTERM, SIGINT, SIGHUP and the runner's death
// mean the supervisor is to stop what runs and exit.
func (sv *supervisor) signaled(s os.Signal) {
	switch s {
	case syscall.SIGCHLD:
	case parentDeathSignal:
		sv.gone = sv.gone || os.Getppid() != sv.parent
	default:
		sv.gone = true
	}
}
