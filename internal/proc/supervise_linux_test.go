//go:build linux

package proc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// escapeScript is a shell script that writes to pidFile the pid of every
// process it starts: itself, a grandchild in its process group, and a
// daemon that leaves the group, the session and the environment
// (`setsid env -i`), ignores SIGTERM and starts a child of its own, which
// ignores it too. Once the four are written down, it runs then.
func escapeScript(pidFile, then string) string {
	return fmt.Sprintf(`echo $$ >> %[1]s
sleep 1000 & echo $! >> %[1]s
setsid env -i sh -c 'trap "" TERM; echo $$ >> %[1]s; sleep 1000 & echo $! >> %[1]s; wait' &
while [ "$(wc -l < %[1]s)" -lt 4 ]; do sleep 0.01; done
%[2]s`, pidFile, then)
}

// readPIDs returns the pids in file, one a line.
func readPIDs(t *testing.T, file string) []int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// waitPIDs waits (bounded) until file names n processes.
func waitPIDs(t *testing.T, file string, n int) []int {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if data, err := os.ReadFile(file); err == nil && strings.Count(string(data), "\n") >= n {
			return readPIDs(t, file)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command did not write %d pids to %s", n, file)
		}
	}
}

// alive returns the pids that still run (zombies do not).
func alive(pids []int) []int {
	var out []int
	for _, pid := range pids {
		if !pidGone(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// pollGone polls until none of pids runs or within has passed, and
// returns the ones still running.
func pollGone(pids []int, within time.Duration) []int {
	deadline := time.Now().Add(within)
	for {
		left := alive(pids)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func killAll(pids []int) {
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

func parentOf(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	st, ok := parseProcStat(data)
	if !ok {
		t.Fatalf("cannot parse /proc/%d/stat", pid)
	}
	return st.ppid
}

func needSupervisor(t *testing.T) {
	t.Helper()
	if supervisorConfig.Load() == nil {
		t.Skip("commands are started directly in this run")
	}
}

// withAndWithoutCgroup runs test under the supervisor with a cgroup for
// the command (where one can be made) and without one (the supervisor
// then relies on the process group and on being the subreaper).
func withAndWithoutCgroup(t *testing.T, test func(t *testing.T, noCgroup bool)) {
	needSupervisor(t)
	sc := supervisorConfig.Load()
	t.Run("cgroup", func(t *testing.T) {
		if sc.noCgroup {
			t.Skip("no cgroup can be made here")
		}
		test(t, false)
	})
	t.Run("no cgroup", func(t *testing.T) {
		supervisorConfig.Store(&supervisorConf{path: sc.path, arg0: sc.arg0, noCgroup: true})
		defer supervisorConfig.Store(sc)
		test(t, true)
	})
}

// TestSupervisorStopsWhatLeftTheGroup: a command that exits leaving a
// grandchild in its group and a daemon outside its group, session and
// environment, which ignores SIGTERM: Run returns the command's exit
// status, and nothing it started is left running when Run returns.
func TestSupervisorStopsWhatLeftTheGroup(t *testing.T) {
	withAndWithoutCgroup(t, testStopsWhatLeftTheGroup)
}

func testStopsWhatLeftTheGroup(t *testing.T, _ bool) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	s := Spec{Argv: []string{"sh", "-c", escapeScript(pidFile, "exit 3")}, Dir: dir, Grace: 500 * time.Millisecond}
	r := runBounded(t, context.Background(), s, time.Minute)
	if r.ExitCode != 3 || r.Signal != "" || r.StartErr != nil {
		t.Fatalf("Run = %+v, want exit 3", r)
	}
	pids := readPIDs(t, pidFile)
	if len(pids) != 4 {
		t.Fatalf("the command started %d processes, want 4: %v", len(pids), pids)
	}
	if left := alive(pids); len(left) > 0 {
		t.Errorf("still running after Run returned: %v (of %v)", left, pids)
		killAll(left)
	}
}

// TestSupervisorStopsAllWhenRunnerKilled is the attack: a runner is
// killed with SIGKILL while its command runs with a grandchild and a
// daemon that left its group, session and environment and ignores
// SIGTERM. Soon nothing of the command runs, nor its supervisor, and the
// cgroup is removed.
func TestSupervisorStopsAllWhenRunnerKilled(t *testing.T) {
	withAndWithoutCgroup(t, testStopsAllWhenRunnerKilled)
}

func testStopsAllWhenRunnerKilled(t *testing.T, noCgroup bool) {
	const grace = time.Second
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	spec, _ := json.Marshal(miniRun{Argv: []string{"sh", "-c", escapeScript(pidFile, "sleep 1000")}, Dir: dir, Grace: grace, NoCgroup: noCgroup})
	runner := exec.Command(os.Args[0])
	// A binary built with -race sleeps a second before it exits, unless told not to.
	runner.Env = append(os.Environ(), miniRunnerEnv+"="+string(spec), "GORACE=atexit_sleep_ms=0")
	runner.Stderr = os.Stderr
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	pids := waitPIDs(t, pidFile, 4)
	t.Cleanup(func() { killAll(pids) })
	supervisor := parentOf(t, pids[0])
	if supervisor == runner.Process.Pid {
		t.Fatal("the command is the runner's own child: it was not supervised")
	}
	cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pids[0]))
	runner.Process.Kill()
	killed := time.Now()
	runner.Wait()

	// It takes the grace period and the supervisor's reaction, about 1.1 s
	// on an idle machine; the bound is far longer, for a loaded one, and
	// far shorter than the command's thousand seconds of sleep.
	const within = 30 * time.Second
	if left := pollGone(append(pids, supervisor), within); len(left) > 0 {
		t.Fatalf("%s after the runner was killed, still running: %v (command and its processes %v, supervisor %d)", within, left, pids, supervisor)
	}
	t.Logf("all gone %s after the runner was killed (grace %s)", time.Since(killed).Round(time.Millisecond), grace)
	if path, ok := unifiedCgroup(cg); ok && strings.Contains(path, cgroupPrefix) {
		parent, err := ownCgroupDir()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(parent, filepath.Base(path))); !os.IsNotExist(err) {
			t.Errorf("the command's cgroup %s was not removed: %v", path, err)
		}
	}
}

// TestSupervisorKilled: when the supervisor itself is killed, its command
// gets the parent-death signal, Run reports SIGKILL, and the runner stops
// what is left of the command's group and, where there is one, its
// cgroup.
func TestSupervisorKilled(t *testing.T) {
	withAndWithoutCgroup(t, testSupervisorKilled)
}

func testSupervisorKilled(t *testing.T, _ bool) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	s := Spec{Argv: []string{"sh", "-c", escapeScript(pidFile, "sleep 1000")}, Dir: dir, Grace: 500 * time.Millisecond}
	done := make(chan Result, 1)
	go func() { done <- Run(context.Background(), s) }()
	pids := waitPIDs(t, pidFile, 4)
	t.Cleanup(func() { killAll(pids) })
	cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pids[0]))
	syscall.Kill(parentOf(t, pids[0]), syscall.SIGKILL)
	var r Result
	select {
	case r = <-done:
	case <-time.After(time.Minute):
		t.Fatal("Run did not return after its supervisor was killed")
	}
	if r.Signal != "SIGKILL" || r.ExitCode != -1 {
		t.Errorf("Run = %+v, want the command killed by SIGKILL", r)
	}
	check := pids[:2] // the command and its grandchild, in its group
	if path, ok := unifiedCgroup(cg); ok && strings.Contains(path, cgroupPrefix) {
		check = pids // and the daemon, in its cgroup
	}
	if left := alive(check); len(left) > 0 {
		t.Errorf("still running after Run returned: %v", left)
	}
}

func TestDescendants(t *testing.T) {
	table := map[int]procStat{
		10: {state: 'S', ppid: 1, pgrp: 10},  // the root
		11: {state: 'S', ppid: 10, pgrp: 11}, // its child
		12: {state: 'Z', ppid: 10, pgrp: 11}, // a zombie child, whose child lives on
		13: {state: 'S', ppid: 12, pgrp: 13},
		14: {state: 'R', ppid: 13, pgrp: 14},
		20: {state: 'S', ppid: 1, pgrp: 20}, // not below the root
		21: {state: 'S', ppid: 20, pgrp: 11},
	}
	got := descendants(table, 10)
	slices.Sort(got)
	if want := []int{11, 13, 14}; !reflect.DeepEqual(got, want) {
		t.Errorf("descendants = %v, want %v", got, want)
	}
}

// TestRunWithoutSupervisor runs the Run tests again with commands started
// directly, as where the supervisor cannot be used.
func TestRunWithoutSupervisor(t *testing.T) {
	if os.Getenv(directEnvVar) == "1" {
		t.Skip("already without the supervisor")
	}
	if testing.Short() {
		t.Skip("runs the Run tests a second time")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^(TestRun|TestKillGroup)", "-test.count=1")
	cmd.Env = append(os.Environ(), directEnvVar+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the Run tests failed without the supervisor: %v\n%s", err, out)
	}
}

// TestWaitingSupervisorKilled: a supervisor killed while it waits for a
// command costs nothing: Run starts the command under another.
func TestWaitingSupervisorKilled(t *testing.T) {
	needSupervisor(t)
	sc := supervisorConfig.Load()
	t.Cleanup(func() {
		// The killed supervisors' cgroups, empty, as a runner's next start would.
		if parent, err := ownCgroupDir(); err == nil {
			removeStaleCgroups(parent)
		}
	})
	for i := 0; i < 3; i++ {
		sc.warm()
		sc.mu.Lock()
		idle := slices.Clone(sc.idle)
		sc.mu.Unlock()
		for _, sp := range idle {
			sp.cmd.Process.Kill()
			if i == 1 {
				<-sp.done // seen dead when taken
			}
		}
		r := runBounded(t, context.Background(), Spec{Argv: []string{"sh", "-c", "exit 4"}}, time.Minute)
		if r.ExitCode != 4 || r.StartErr != nil {
			t.Fatalf("Run after the waiting supervisors were killed = %+v, want exit 4", r)
		}
	}
}

// TestSupervisorRunsCommandsInTurn: one supervisor runs command after
// command, each in its own process group and under the same cgroup,
// which holds nothing between them.
func TestSupervisorRunsCommandsInTurn(t *testing.T) {
	needSupervisor(t)
	var supervisors, groups []int
	for i := 0; i < 3; i++ {
		out := NewTailBuffer(64)
		var pgid int
		r := runBounded(t, context.Background(), Spec{Argv: []string{"sh", "-c", "echo $PPID"}, Stdout: out,
			OnStart: func(_, g int) { pgid = g }}, time.Minute)
		if r.ExitCode != 0 {
			t.Fatalf("Run = %+v", r)
		}
		ppid, err := strconv.Atoi(strings.TrimSpace(string(out.Bytes())))
		if err != nil {
			t.Fatal(err)
		}
		supervisors, groups = append(supervisors, ppid), append(groups, pgid)
	}
	if supervisors[0] != supervisors[1] || supervisors[1] != supervisors[2] || supervisors[0] == os.Getpid() {
		t.Errorf("the commands ran under supervisors %v, want one supervisor, not the runner (%d)", supervisors, os.Getpid())
	}
	if groups[0] == groups[1] || groups[1] == groups[2] {
		t.Errorf("the commands ran in process groups %v, want one each", groups)
	}
	if parent, err := ownCgroupDir(); err == nil && !supervisorConfig.Load().noCgroup {
		cg := filepath.Join(parent, cgroupPrefix+strconv.Itoa(supervisors[0]))
		if procs := cgroupProcs(cg); len(procs) != 0 {
			t.Errorf("cgroup %s holds %v between commands, want nothing", cg, procs)
		}
	}
}
