//go:build linux

package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// selfExe names the running binary, also after it was replaced or deleted
// on disk.
const selfExe = "/proc/self/exe"

// UseSupervisor makes Run start every later command under the supervisor:
// the running binary (/proc/self/exe) started as `arg0 __supervise`, which
// must call Supervise. arg0 is what the binary needs in argv[0] to do
// that (normally os.Args[0]). It returns how descendants will be tracked:
// the cgroup v2 under which each command gets its own, or why there is
// none (the supervisor then stops the command's group and every process
// below it, as their subreaper). Without /proc, nothing changes and the
// note says why. Empty cgroups left by supervisors that were killed are
// removed, and a supervisor is started, to wait for the first command.
func UseSupervisor(arg0 string) Tracking {
	if _, err := os.Stat(selfExe); err != nil {
		return Tracking{Note: fmt.Sprintf("cannot start the supervisor (%v); commands are started directly and tracked by their process group", err)}
	}
	t := Tracking{Supervised: true}
	parent, err := probeCgroup()
	if err != nil {
		t.Note = fmt.Sprintf("no cgroup for the commands (%v); the supervisor tracks them as their subreaper", err)
	} else {
		t.Cgroup = parent
		removeStaleCgroups(parent)
	}
	sc := &supervisorConf{path: selfExe, arg0: arg0, noCgroup: t.Cgroup == ""}
	sc.pids, sc.pidsNote = probePids(t.Cgroup)
	if sc.pids.ok() {
		t.ProcessLimit = sc.pids.String()
	} else {
		t.NoProcessLimit = sc.pidsNote
	}
	supervisorConfig.Store(sc)
	// The first command's supervisor starts while the runner gets ready.
	go sc.warm()
	return t
}

// probeCgroup checks that a supervisor, started in the caller's cgroup,
// can create a child cgroup with cgroup.kill and start a command in it,
// and returns the caller's cgroup directory.
func probeCgroup() (string, error) {
	cg, err := newCgroup(cgroupPrefix + strconv.Itoa(os.Getpid()) + "-probe")
	if err != nil {
		return "", err
	}
	parent := filepath.Dir(cg.dir)
	if err := cg.remove(); err != nil {
		return "", err
	}
	// Starting a process in a child cgroup needs write access to the
	// cgroup.procs of the common ancestor, the caller's cgroup.
	if err := unix.Access(filepath.Join(parent, "cgroup.procs"), unix.W_OK); err != nil {
		return "", fmt.Errorf("%s/cgroup.procs: %w", parent, err)
	}
	return parent, nil
}

// removeStaleCgroups removes the empty cgroups under parent that
// supervisors no longer running left behind (they were killed).
func removeStaleCgroups(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, _, ok := cgroupOwner(e.Name())
		if !ok || !e.IsDir() || processAlive(pid) {
			continue
		}
		unix.Rmdir(filepath.Join(parent, e.Name())) // fails if not empty
	}
}

// cgroupOwner reads the name of a cgroup a supervisor or a probing runner
// made: cgroupPrefix, the pid of its maker, then "-N" (the maker's N-th
// command) or "-probe".
func cgroupOwner(name string) (pid int, probe, ok bool) {
	rest, ok := strings.CutPrefix(name, cgroupPrefix)
	if !ok {
		return 0, false, false
	}
	id, suffix, _ := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(id)
	if err != nil || pid <= 0 {
		return 0, false, false
	}
	return pid, suffix == "probe", true
}

// processAlive reports whether pid runs: it may be the supervisor (or the
// probing runner) of that cgroup, which is then left alone.
func processAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	st, ok := parseProcStat(data)
	return !ok || !st.dead()
}
