package crash

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/e2e"
)

// The tests here kill the runner with SIGKILL while its agent or a guard
// runs, and start no other runner: what the iteration started must stop
// by itself. It takes executor.kill_grace plus the supervisor's reaction
// (logged; about 1.1 s on an idle machine); the tests' bound, stopAfter,
// is far longer, so that a loaded machine does not fail them, and far
// shorter than the scripts' thousand seconds of sleep.

// strayScript is a shell script that writes to pidFile the pid of every
// process it starts: itself, a grandchild in its process group, and a
// daemon that leaves the group, the session and the environment (`setsid
// env -i`) and starts a child of its own; with ignoreTerm, the daemon and
// its child ignore SIGTERM. It then waits for them, for ever.
func strayScript(pidFile string, ignoreTerm bool) string {
	trap := ""
	if ignoreTerm {
		trap = `trap "" TERM; `
	}
	return fmt.Sprintf(`echo $$ >> %[1]s
sleep 1000 & echo $! >> %[1]s
setsid env -i sh -c '%[2]secho $$ >> %[1]s; sleep 1000 & echo $! >> %[1]s; wait' &
wait`, pidFile, trap)
}

// stopAfter bounds the wait for an iteration's processes to stop after
// the runner is killed.
const stopAfter = 30 * time.Second

// strayPIDs is how many pids strayScript writes.
const strayPIDs = 4

// doneAgent is an agent that delivers "done" at once.
const doneAgent = `echo '{"status": "done", "summary": "done"}' > "$RUNNER_OUTPUT_FILE"`

// silenceRepo creates a repository whose agent and guard are shell
// scripts, with kill_grace = grace; guard "" means no guard.
func silenceRepo(t testing.TB, agent, guard string, grace time.Duration) *e2e.Repo {
	t.Helper()
	r := e2e.NewRepo(t, e2e.OneTask, "")
	config := fmt.Sprintf(`[executor]
preset = "command"
command = ["sh", "-c", %s]
timeout = "5m"
kill_grace = %q

[loop]
max_iterations = 10
max_attempts = 5
`, e2e.TomlString(agent), grace.String())
	if guard != "" {
		config += fmt.Sprintf("\n[[guard]]\nname = \"serve\"\nrun = %s\n", e2e.TomlString(guard))
	}
	r.Write(".runner/config.toml", config)
	return r
}

// waitStrays waits (bounded) until pidFile names every process of
// strayScript, and returns them.
func waitStrays(t testing.TB, pidFile string) []int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		data, _ := os.ReadFile(pidFile)
		if strings.Count(string(data), "\n") >= strayPIDs {
			var pids []int
			for _, f := range strings.Fields(string(data)) {
				pid, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("%s: %v", pidFile, err)
				}
				pids = append(pids, pid)
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("the script did not write its %d pids to %s: %q", strayPIDs, pidFile, data)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitStrayPID waits (bounded) for a pid to be written to file.
func waitStrayPID(t testing.TB, file string) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		data, _ := os.ReadFile(file)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s: %q", file, data)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// procStat returns the state and parent of pid; ok is false once it is
// gone.
func procStat(pid int) (state byte, ppid int, ok bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	i := strings.LastIndexByte(string(data), ')')
	f := strings.Fields(string(data[i+1:]))
	if i < 0 || len(f) < 2 {
		return 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	return f[0][0], ppid, true
}

// running returns the pids that still run; zombies do not.
func running(pids []int) []int {
	var out []int
	for _, pid := range pids {
		if st, _, ok := procStat(pid); ok && st != 'Z' && st != 'X' {
			out = append(out, pid)
		}
	}
	return out
}

// untilSilent polls (every millisecond) until none of pids runs or within
// has passed, and returns the ones still running and when the last one
// was seen gone.
func untilSilent(pids []int, within time.Duration) ([]int, time.Time) {
	deadline := time.Now().Add(within)
	for {
		left := running(pids)
		now := time.Now()
		if len(left) == 0 || now.After(deadline) {
			return left, now
		}
		time.Sleep(time.Millisecond)
	}
}

func killPIDs(pids []int) {
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// killedMidway starts `runner run`, waits until the script of pidFile has
// started all its processes, and kills the runner with SIGKILL. It
// returns the script's processes and their supervisor, and when the
// runner was killed.
func killedMidway(t testing.TB, r *e2e.Repo, pidFile string) (pids []int, killed time.Time) {
	t.Helper()
	// A binary built with -race sleeps a second before it exits, unless told not to.
	cmd, out := r.RunnerCmd([]string{"GORACE=atexit_sleep_ms=0"}, "run")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pids = waitStrays(t, pidFile)
	_, supervisor, ok := procStat(pids[0])
	if !ok || supervisor == cmd.Process.Pid {
		killPIDs(append(pids, cmd.Process.Pid))
		cmd.Wait()
		t.Fatalf("the script (pid %d, parent %d) does not run under a supervisor of runner %d:\n%s", pids[0], supervisor, cmd.Process.Pid, out)
	}
	pids = append(pids, supervisor)
	cmd.Process.Kill()
	killed = time.Now()
	cmd.Wait()
	return pids, killed
}

// TestKilledRunnerLeavesNoAgentProcess is the attack: kill -9 of the
// runner while its agent runs with a grandchild and a daemon that left
// the agent's process group, session and environment and ignores
// SIGTERM. With kill_grace = "1s" and no other runner started, soon
// nothing of the iteration runs: not the agent, not what it
// started, not its supervisor.
func TestKilledRunnerLeavesNoAgentProcess(t *testing.T) {
	const grace = time.Second
	pidFile := filepath.Join(t.TempDir(), "pids")
	r := silenceRepo(t, strayScript(pidFile, true), "", grace)
	pids, killed := killedMidway(t, r, pidFile)
	t.Cleanup(func() { killPIDs(pids) })
	left, silent := untilSilent(pids, stopAfter)
	if len(left) > 0 {
		t.Fatalf("%s after the runner was killed, these still run: %v (agent, grandchild, daemon, its child, supervisor: %v)", stopAfter, left, pids)
	}
	t.Logf("silent %s after the runner was killed (kill_grace %s)", silent.Sub(killed).Round(time.Millisecond), grace)
}

// TestKilledRunnerLeavesNoGuardProcess is the same attack while a guard
// runs with a background process and a daemon of its own.
func TestKilledRunnerLeavesNoGuardProcess(t *testing.T) {
	const grace = time.Second
	pidFile := filepath.Join(t.TempDir(), "pids")
	r := silenceRepo(t, doneAgent, strayScript(pidFile, true), grace)
	pids, killed := killedMidway(t, r, pidFile)
	t.Cleanup(func() { killPIDs(pids) })
	left, silent := untilSilent(pids, stopAfter)
	if len(left) > 0 {
		t.Fatalf("%s after the runner was killed, these still run: %v (guard, its background process, daemon, its child, supervisor: %v)", stopAfter, left, pids)
	}
	t.Logf("silent %s after the runner was killed (kill_grace %s)", silent.Sub(killed).Round(time.Millisecond), grace)
}

// killWithSupervisors kills a runner and the supervisors of its agent and
// guards at the same instant, as `pkill -9 -f runner` would: the
// supervisors are stopped first, so that none acts on the runner's death.
func killWithSupervisors(t *testing.T, runner int) {
	t.Helper()
	var supervisors []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid, ok := procStat(pid); ok && ppid == runner {
			supervisors = append(supervisors, pid)
		}
	}
	if len(supervisors) == 0 {
		t.Fatalf("runner %d has no supervisor running", runner)
	}
	for _, pid := range supervisors {
		syscall.Kill(pid, syscall.SIGSTOP)
	}
	// SIGSTOP takes effect when each thread is next scheduled: on a busy
	// machine a supervisor's thread could still see the runner die and stop
	// its command. The runner is killed once every thread is stopped.
	waitUntil(t, "the supervisors to stop", time.Minute, func() bool {
		for _, pid := range supervisors {
			if !allThreadsStopped(pid) {
				return false
			}
		}
		return true
	})
	syscall.Kill(runner, syscall.SIGKILL)
	killPIDs(supervisors)
}

// allThreadsStopped reports whether every thread of pid is stopped (or
// gone).
func allThreadsStopped(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return true
	}
	for _, task := range tasks {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(data), ')')
		if f := strings.Fields(string(data[i+1:])); i >= 0 && len(f) > 0 && f[0] != "T" && f[0] != "t" && f[0] != "Z" && f[0] != "X" {
			return false
		}
	}
	return true
}
