package crash

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/e2e"
	"github.com/runner-cli/runner/internal/state"
)

// waitUntil polls cond every 20 ms for at most limit.
func waitUntil(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stubbornScript: the first attempt ignores SIGTERM and sleeps; the
// second is done at once.
const stubbornScript = `{"steps": [
  {"attempt": 1, "ignore_term": true, "stdout": "ready\n", "write": [{"path": "half.txt", "content": "partial\n"}], "sleep": "60s"}],
 "default": {"message": {"status": "done", "summary": "finished the task"}}}`

// TestSignalInterruptsRun sends SIGINT or SIGTERM to a runner whose agent
// ignores SIGTERM: the agent's group gets SIGTERM, then SIGKILL after the
// grace period; the iteration is recorded as interrupted (an attempt);
// the lock is released; the exit status is 130. The next run retries the
// task and tells the agent the working tree may hold partial changes.
func TestSignalInterruptsRun(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			const grace = time.Second
			r := e2e.FakeAgentRepo(t, e2e.OneTask, stubbornScript, `timeout = "5m"`+"\n"+`kill_grace = "1s"`)
			cmd, wait := r.StartRunner()
			waitUntil(t, "the agent to start", time.Minute, r.AgentRunning)
			sent := time.Now()
			cmd.Process.Signal(sig)
			res := wait(time.Minute)
			took := time.Since(sent)
			if res.Code != 130 {
				t.Fatalf("exit %d, want 130:\n%s", res.Code, res.Out)
			}
			// The agent ignores SIGTERM, so it dies only at SIGKILL: not
			// before the grace period, and long before its minute of sleep.
			t.Logf("the runner exited %s after the signal", took)
			if bound := 30 * time.Second; took > bound || took < grace {
				t.Errorf("the runner exited %s after the signal; want between the grace period (%s) and %s, well before the agent's sleep ends", took, grace, bound)
			}
			if left := r.WaitNoAgents(10 * time.Second); len(left) > 0 {
				t.Errorf("agent processes survived the interrupt: %v", left)
			}
			if held, holder, err := state.LockHolder(r.Paths); err != nil || held {
				t.Errorf("lock after exit: held %v by %q (%v); want released", held, holder, err)
			}
			s := r.CheckState("after the interrupt")
			if s.RS.InFlight != nil || s.RS.LastStatus != "interrupted" {
				t.Errorf("run state %+v; want nothing in flight and last_status interrupted", s.RS)
			}
			if n := s.Tree.Root.Children[0]; n.Attempts != 1 {
				t.Errorf("attempts = %d after an interrupted iteration, want 1", n.Attempts)
			}
			if !hasEvent(s.Journal, 1, state.EventInterrupted) {
				t.Errorf("journal has no interrupted record for iteration 1: %+v", s.Journal)
			}

			res = r.RunRunner(time.Minute, 0, nil, "run")
			if res.Code != 0 {
				t.Fatalf("the next run: exit %d:\n%s", res.Code, res.Out)
			}
			history := e2e.ReadFile(t, filepath.Join(r.Paths.ContextDir(), "history.md"))
			if !strings.Contains(history, "interrupted") || !strings.Contains(history, "partial changes") {
				t.Errorf("history.md of the retry does not say the attempt was interrupted and left partial changes:\n%s", history)
			}
			prompt := e2e.ReadFile(t, filepath.Join(r.Paths.RunDir(2), "prompt.md"))
			if !strings.Contains(prompt, "partial changes") {
				t.Errorf("the retry's prompt does not carry the interrupted history")
			}
		})
	}
}

func hasEvent(journal []state.Record, iteration int, event string) bool {
	for _, rec := range journal {
		if rec.Iteration == iteration && rec.Event == event {
			return true
		}
	}
	return false
}

// TestLockOneRunnerPerRepository: a second `runner run` exits 1 at once,
// naming the pid of the runner holding the lock; after that runner is
// killed with SIGKILL the next one takes the lock at once, records the
// interrupted iteration and finishes the work.
func TestLockOneRunnerPerRepository(t *testing.T) {
	r := e2e.FakeAgentRepo(t, e2e.OneTask, stubbornScript, `kill_grace = "1s"`)
	first, wait := r.StartRunner()
	waitUntil(t, "the agent to start", time.Minute, r.AgentRunning)

	second := r.RunRunner(time.Minute, 0, nil, "run")
	t.Logf("the second runner exited after %s", second.Took)
	if second.Code != 1 {
		t.Fatalf("second runner: exit %d, want 1:\n%s", second.Code, second.Out)
	}
	if want := fmt.Sprintf("pid %d", first.Process.Pid); !strings.Contains(second.Out, want) {
		t.Errorf("second runner's message does not name the holder (%s):\n%s", want, second.Out)
	}
	// It does not wait for the lock: it gave up while the first runner,
	// whose agent sleeps for a minute, still held it.
	if held, holder, err := state.LockHolder(r.Paths); err != nil || !held || !strings.Contains(holder, strconv.Itoa(first.Process.Pid)) {
		t.Errorf("when the second runner gave up, the lock was held %v by %q (%v); want held by the first runner, pid %d", held, holder, err, first.Process.Pid)
	}
	if got := e2e.ReadFile(t, r.Paths.Lock()); !strings.Contains(got, strconv.Itoa(first.Process.Pid)) {
		t.Errorf("the second runner changed the lock file: %q", got)
	}

	first.Process.Signal(syscall.SIGKILL)
	if res := wait(30 * time.Second); !res.Killed {
		t.Fatalf("first runner was not killed: %+v", res)
	}
	// The lock is taken without waiting, so a runner that did not get it
	// would exit 1 at once: exit 0 means the kernel freed it at the kill.
	res := r.RunRunner(time.Minute, 0, nil, "run")
	if res.Code != 0 || strings.Contains(res.Out, "lock") {
		t.Fatalf("third runner: exit %d:\n%s", res.Code, res.Out)
	}
	if _, err := os.Stat(r.Paths.Lock()); err != nil {
		t.Errorf("the lock file must never be deleted: %v", err)
	}
	s := r.CheckState("after the third runner")
	if !hasEvent(s.Journal, 1, state.EventInterrupted) || !hasEvent(s.Journal, 2, state.EventRecorded) {
		t.Errorf("journal: want iteration 1 interrupted and iteration 2 recorded: %+v", s.Journal)
	}
	if left := r.WaitNoAgents(10 * time.Second); len(left) > 0 {
		t.Errorf("agent processes survived: %v", left)
	}
}

// TestLeftoverAgentKilledOnStart: a runner died right after starting its
// agent, before recording the agent's process group. The next runner
// finds the agent's processes by their RUNNER_DIR and RUNNER_ITERATION
// and kills their group before anything else, while a live process group
// whose id was recorded but is not this repository's agent (an id reused
// after a reboot) is left alone.
func TestLeftoverAgentKilledOnStart(t *testing.T) {
	r := e2e.FakeAgentRepo(t, e2e.OneTask, `{"default": {"message": {"status": "done", "summary": "done"}}}`, `kill_grace = "500ms"`)
	start := func(env ...string) *exec.Cmd {
		t.Helper()
		cmd := exec.Command("sh", "-c", "sleep 60 & sleep 60")
		cmd.Env = append(os.Environ(), env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go cmd.Wait()
		t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
		return cmd
	}
	agent := start("RUNNER_DIR="+r.Paths.Dir, "RUNNER_ITERATION=1", e2e.CrashTokenEnv+"="+r.Token)
	stranger := start("RUNNER_DIR=" + r.Paths.Dir + "-elsewhere")
	if err := os.MkdirAll(r.Paths.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	// A runner (pid 1: surely not ours) died in iteration 1 with the
	// stranger's group recorded as its agent's.
	rs := &state.RunState{InFlight: &state.InFlight{Iteration: 1, Node: "only", Phase: state.PhaseStarted,
		RunnerPID: 1, AgentPGID: stranger.Process.Pid, StartedAt: time.Now().UTC()}}
	if err := state.SaveRunState(r.Paths.RunState(), rs); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the planted agent to run", 10*time.Second, func() bool { return len(r.AgentProcesses()) >= 2 })

	res := r.RunRunner(time.Minute, 0, nil, "run")
	if res.Code != 0 {
		t.Fatalf("runner: exit %d:\n%s", res.Code, res.Out)
	}
	if left := r.WaitNoAgents(10 * time.Second); len(left) > 0 {
		t.Errorf("the leftover agent (group %d) survived: %v", agent.Process.Pid, left)
	}
	if syscall.Kill(-stranger.Process.Pid, 0) != nil {
		t.Errorf("the runner killed process group %d, which is not its agent", stranger.Process.Pid)
	}
	if !strings.Contains(res.Out, "holds no process of that agent") {
		t.Errorf("the runner did not say why it left group %d alone:\n%s", stranger.Process.Pid, res.Out)
	}
	s := r.CheckState("after the resume")
	// The runner's first death spends no attempt (state.RunState.Death).
	if !hasEvent(s.Journal, 1, state.EventInterrupted) || s.Tree.Root.Children[0].Attempts != 0 {
		t.Errorf("iteration 1 was not recorded as interrupted with no attempt spent: %+v", s.Journal)
	}
}

// TestAgentDaemonStoppedWithIteration: an agent that starts a daemon
// outside its process group (setsid) does not leave it running past the
// iteration: the agent's supervisor stops it as soon as the agent exits,
// so it is gone when the runner is.
func TestAgentDaemonStoppedWithIteration(t *testing.T) {
	r := e2e.NewRepo(t, e2e.OneTask, "", e2e.CrashSteadyEnv+` = "1"`, e2e.CrashDaemonEnv+` = "1"`)
	res := r.RunRunner(time.Minute, 0, nil, "run", "--once")
	if res.Code != 0 {
		t.Fatalf("exit %d:\n%s", res.Code, res.Out)
	}
	daemons := 0
	for _, a := range r.AgentStarts() {
		if a.Role == "daemon" {
			daemons++
		}
	}
	if daemons != 1 {
		t.Fatalf("the agent started %d daemons, want 1", daemons)
	}
	if left := r.AgentProcesses(); len(left) > 0 {
		t.Errorf("the agent's daemon outlived its iteration: %v", left)
	}
}

// TestGuardLeftoverKilledOnStart: a runner killed along with the
// supervisor of its guard (both SIGKILLed at once) leaves the guard's
// background child behind: the guard's shell dies with its supervisor,
// its children do not, and nothing is left to stop them. The next runner
// finds the child by the iteration in its environment, as it finds an
// agent's, and stops it before it runs the guards again.
func TestGuardLeftoverKilledOnStart(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("leftover guards are found by their environment on Linux only")
	}
	// The guard's child must outlive its runner for the test to have
	// something to find. Now and then (about one time in forty, on a quiet
	// machine too, for a reason not found yet) it is gone right after the
	// kill; the setup is then made again, at most three times.
	for try := 1; ; try++ {
		if guardLeftoverKilledOnStart(t, try == 3) {
			return
		}
		t.Logf("try %d: the guard's child died with the runner; setting up again", try)
	}
}

// guardLeftoverKilledOnStart is one try of TestGuardLeftoverKilledOnStart;
// false when the guard's child died with the runner, which fails the test
// on the last try.
func guardLeftoverKilledOnStart(t *testing.T, last bool) bool {
	r := e2e.FakeAgentRepo(t, e2e.OneTask, `{"default": {"message": {"status": "done", "summary": "done"}}}`, `kill_grace = "500ms"`)
	config, err := os.ReadFile(filepath.Join(r.Root, ".runner/config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(r.Root, "guard-ran")
	daemonPID := filepath.Join(t.TempDir(), "daemon.pid")
	r.Write(".runner/config.toml", string(config)+fmt.Sprintf(`
[[guard]]
name = "serve"
run = "if [ -e %[1]s ]; then exit 0; fi; setsid env -i sh -c 'echo $$ > %[4]s; exec sleep 60' & %[2]s=%[3]s sleep 60 & touch %[1]s; sleep 60"
`, marker, e2e.CrashTokenEnv, r.Token, daemonPID))

	cmd, wait := r.StartRunner()
	waitUntil(t, "the guard's child to run", 20*time.Second, func() bool {
		_, err := os.Stat(marker)
		return err == nil && len(r.AgentProcesses()) > 0
	})
	killWithSupervisors(t, cmd.Process.Pid)
	if res := wait(10 * time.Second); !res.Killed {
		t.Fatalf("the runner was not killed: exit %d\n%s", res.Code, res.Out)
	}
	if len(r.AgentProcesses()) == 0 {
		if !last {
			return false
		}
		out, _ := exec.Command("ps", "-eo", "pid,ppid,pgid,stat,args").Output()
		t.Fatalf("the guard's child died with the runner three times; the test needs it to outlive it. Processes:\n%s", out)
	}
	// The daemon cleared its environment: only its cgroup, where there
	// is one, tells whose it is.
	daemon := waitStrayPID(t, daemonPID)
	t.Cleanup(func() { killPIDs([]int{daemon}) })
	cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", daemon))
	inCgroup := strings.Contains(string(cg), "/runner-")

	res := r.RunRunner(time.Minute, 0, nil, "run")
	if res.Code != 0 {
		t.Fatalf("runner: exit %d:\n%s", res.Code, res.Out)
	}
	if left := r.WaitNoAgents(10 * time.Second); len(left) > 0 {
		t.Errorf("the guard's child survived the next runner: %v\n%s", left, res.Out)
	}
	if left := running([]int{daemon}); inCgroup && len(left) > 0 {
		t.Errorf("the guard's daemon, in the cgroup of its killed supervisor, survived the next runner:\n%s", res.Out)
	}
	s := r.CheckState("after the resume")
	if !hasEvent(s.Journal, 1, state.EventRecorded) || s.Tree.Root.Children[0].Status != "done" {
		t.Errorf("iteration 1 was not recorded as done after its guards ran again: %+v", s.Journal)
	}
	return true
}
