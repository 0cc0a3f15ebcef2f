package workers

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/e2e"
	"github.com/runner-cli/runner/internal/engine"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// TestEngineWorkerCannotWork runs a tree on a worker whose git cannot
// reach the remote (its global git configuration sends the remote's path
// elsewhere), then on one without the agent's program: every iteration
// they take fails before its agent starts. Those cost the tasks no
// attempt, and after loop.max_consecutive_errors of them in a row the
// coordinator stops, saying what the worker said and what to look at,
// rather than send the tasks round it all night. A worker whose git.setup
// writes outside the iteration's worktree fails there, confined, its log
// and the coordinator saying why. With a worker that can work (and a
// second one refused its folder), the same tree then runs to the end; the
// coordinator, whose rooms have no namespaces here, says the engine is
// not protected.
func TestEngineWorkerCannotWork(t *testing.T) {
	srv, r, remote := engineRepo(t, e2e.FlatTree("fetch", 2, 0), engineConf("max_consecutive_errors = 3\n", 2, ""), e2e.CrashSteadyEnv+` = "1"`, e2e.CrashSlotsEnv+` = "2"`)
	// The agent is a program looked for on PATH, which only some workers
	// have.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	agentDir := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(agentDir, "crash-agent")); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(r.Paths.Config())
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(cfg), "command = ["+e2e.TomlString(exe)+"]", `command = ["crash-agent"]`, 1)
	// A setup that writes where SETUP_ESCAPE says, which only the escape
	// worker's environment names.
	text = strings.Replace(text, "[git]\n", "[git]\nsetup = ['[ -z \"$SETUP_ESCAPE\" ] || touch \"$SETUP_ESCAPE\"']\n", 1)
	r.Write(".runner/config.toml", text)
	r.Git("-c", "user.name=Person", "-c", "user.email=p@example.com", "commit", "-qam", "the agent on PATH")
	withAgent := "PATH=" + agentDir + string(os.PathListSeparator) + os.Getenv("PATH")

	elsewhere := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(elsewhere, fmt.Appendf(nil, "[url %q]\n\tinsteadOf = %s\n", filepath.Join(t.TempDir(), "gone.git"), remote), 0o644); err != nil {
		t.Fatal(err)
	}
	badWorker := func(name, why string, env ...string) *process {
		t.Helper()
		w := startWorkerWith(t, r, srv.address, filepath.Join(t.TempDir(), name), name, env)
		before := len(r.CheckState("before " + name).Metas)
		res := r.RunRunner(3*time.Minute, 0, nil, "run")
		if res.Code != 1 || !strings.Contains(res.Out, "iterations in a row failed on their workers before the agent started (loop.max_consecutive_errors = 3)") ||
			!strings.Contains(res.Out, why) {
			t.Fatalf("with worker %s, runner run exited %d, want 1 and the worker's failure (%s):\n%s\nworker:\n%s", name, res.Code, why, res.Out, w.out)
		}
		w.stopCleanly()
		s := r.CheckState("after worker " + name)
		if len(s.Metas)-before < 3 {
			t.Errorf("%d iterations on %s, want at least 3 before the stop", len(s.Metas)-before, name)
		}
		for n, m := range s.Metas {
			if m.Outcome != state.OutcomeInterrupted || !m.NoAttempt {
				t.Errorf("iteration %d on %s: outcome %s, no_attempt %v; want interrupted with no attempt", n, m.Worker, m.Outcome, m.NoAttempt)
			}
			if n > before && m.Worker != name {
				t.Errorf("iteration %d: worker %q, want %s", n, m.Worker, name)
			}
		}
		for _, c := range s.Tree.Root.Children {
			if c.Attempts != 0 || c.EffectiveStatus() != tree.StatusOpen {
				t.Errorf("task %s: %s with %d attempts, want open with none", c.ID, c.EffectiveStatus(), c.Attempts)
			}
		}
		if starts := r.AgentStarts(); len(starts) > 0 {
			t.Errorf("an agent started on worker %s: %+v", name, starts)
		}
		return w
	}
	// Its git sends the remote elsewhere.
	badWorker("nofetch", "gone.git", withAgent, "GIT_CONFIG_GLOBAL="+elsewhere)
	// The agent's program is not installed there.
	badWorker("noagent", "crash-agent")
	// Its git.setup writes outside the worktree: confined, it cannot.
	if abi, _ := sandbox.ABI(); abi > 0 {
		escape := filepath.Join(t.TempDir(), "escaped")
		w := badWorker("escape", "git.setup: ", withAgent, "SETUP_ESCAPE="+escape)
		if fileExists(escape) {
			t.Errorf("git.setup wrote outside the iteration's room on the worker")
		}
		if !strings.Contains(w.out.String(), "failed: git.setup: ") || !strings.Contains(w.out.String(), "touch: cannot touch '"+escape+"'") {
			t.Errorf("the worker's log does not say its git.setup could not write outside the room:\n%s", w.out)
		}
	}

	goodDir := filepath.Join(t.TempDir(), "good")
	good := startWorkerWith(t, r, srv.address, goodDir, "good", []string{withAgent})
	// A second worker in the same folder would take the first one's
	// agents for a dead worker's leftovers: it is refused.
	awaitCond(t, time.Minute, "the good worker to hold its folder", nil, func() bool { return fileExists(filepath.Join(goodDir, "worker.pid")) })
	twin := startWorkerWith(t, r, srv.address, goodDir, "twin", []string{withAgent})
	if code := twin.wait(time.Minute); code == 0 || !strings.Contains(twin.out.String(), "another runner worker uses "+goodDir) {
		t.Errorf("a second worker in the good worker's folder exited %d, want refused:\n%s", code, twin.out)
	}
	res := r.RunRunner(3*time.Minute, 0, nil, "run")
	if res.Code != 0 {
		t.Fatalf("with a worker that can fetch, runner run exited %d:\n%s\nworker:\n%s", res.Code, res.Out, good.out)
	}
	good.stopCleanly()
	r.CheckFinal()
	if abi, _ := sandbox.ABI(); abi > 0 && !strings.Contains(res.Out, "the engine is NOT PROTECTED: the agents' rooms cannot hide the engine key: the rooms have no mount namespace of their own (left out by RUNNER_SANDBOX_WITHOUT)") {
		t.Errorf("a coordinator whose rooms have no namespaces does not say the engine is not protected:\n%s", res.Out)
	}
}

// TestEngineResultWaitsForAWorker follows an iteration on a worker with
// `runner show --follow` (where it runs, its heartbeat's events), then
// stops the only worker while its agent works and lets the agent finish
// within the worker's grace: the activity ends, but the workflow's last
// step, which hands its result back, runs on a worker too. Meanwhile
// `runner status` says the iteration finished on its worker and waits
// for one; once a worker polls again, the coordinator records it, once,
// as the first worker's, and show --follow ends showing it.
func TestEngineResultWaitsForAWorker(t *testing.T) {
	srv, r, _, hold := heldTask(t, "hand")
	w1 := startWorker(t, r, srv.address, filepath.Join(t.TempDir(), "w1"), "w1")
	coord := startCoordinator(t, r)
	awaitCond(t, 90*time.Second, "the agent at work on w1", coord, func() bool { return len(r.AgentProcesses()) > 0 })
	// show --follow says where it runs and follows its worker's events.
	followCmd, _ := r.RunnerCmd(nil, "show", "1", "--follow")
	follow := startProcess(t, followCmd)
	awaitCond(t, time.Minute, "show --follow to follow the worker", coord, func() bool {
		out := follow.out.String()
		return strings.Contains(out, "── on worker w1: its latest events follow") && strings.Contains(out, "── the agent works")
	})
	w1.cmd.Process.Signal(os.Interrupt) // it takes no more work; what it has gets 10 s
	os.Remove(hold)
	if code := w1.wait(time.Minute); code != 0 {
		t.Fatalf("w1 exited %d after an interrupt:\n%s", code, w1.out)
	}
	var status e2e.RunnerResult
	awaitCond(t, time.Minute, "status to say the result waits for a worker", coord, func() bool {
		status = r.RunRunner(time.Minute, 0, nil, "status")
		return strings.Contains(status.Out, "finished on worker w1; what came of it waits for a worker to poll the task queue")
	})
	if !strings.Contains(status.Out, "running: iteration 1 on hand-000, on worker w1") {
		t.Errorf("status while the result waits:\n%s", status.Out)
	}

	w2 := startWorker(t, r, srv.address, filepath.Join(t.TempDir(), "w2"), "w2")
	if code := coord.wait(2 * time.Minute); code != 0 {
		t.Fatalf("the coordinator exited %d:\n%s", code, coord.out)
	}
	w2.stopCleanly()
	if code := follow.wait(time.Minute); code != 0 || !strings.Contains(follow.out.String(), "iteration 1 — hand/hand-000") {
		t.Errorf("show --follow exited %d, want 0 after showing the iteration:\n%s", code, follow.out)
	}
	r.CheckFinal()
	s := r.CheckState("at the end")
	if m := s.Metas[1]; len(s.Metas) != 1 || m == nil || m.Outcome != state.OutcomeDone || m.Worker != "w1" {
		t.Errorf("iterations %+v, want one, done on w1", s.Metas)
	}
}

// TestEngineWorkerStopsPastItsGrace stops the only worker while its agent
// is held past the worker's 10 s of grace: the iteration is cancelled
// there, its agent stopped, what the agent had written pushed to the
// iteration's leftover ref, and the worker's folder tidied, before the
// worker exits (as a pod deleted with its disk must). The iteration is
// recorded interrupted, and the task done on the next worker.
func TestEngineWorkerStopsPastItsGrace(t *testing.T) {
	srv, r, remote, hold := heldTask(t, "grace")
	w1dir := filepath.Join(t.TempDir(), "w1")
	w1 := startWorker(t, r, srv.address, w1dir, "w1")
	coord := startCoordinator(t, r)
	awaitCond(t, 90*time.Second, "the agent at work on w1, having written", coord, func() bool {
		return len(r.AgentsOn(w1dir)) > 0 && len(startedIn(w1dir, "grace-")) == 1
	})
	w1.cmd.Process.Signal(os.Interrupt)
	if code := w1.wait(2 * time.Minute); code != 0 {
		t.Fatalf("w1 exited %d after an interrupt:\n%s", code, w1.out)
	}
	if left := r.AgentsOn(w1dir); len(left) > 0 {
		t.Errorf("agents left by the stopped worker: %v", left)
	}
	ref := engine.LeftoverRef(runIDOf(t, r), 1, 0)
	if out, err := exec.Command("git", "--git-dir", remote, "ls-tree", "-r", "--name-only", ref).CombinedOutput(); err != nil || !strings.Contains(string(out), "work/grace-000.started") {
		t.Errorf("the cancelled agent's work at %s: %v\n%s\nw1:\n%s", ref, err, out, w1.out)
	}
	for _, d := range []string{"work", "underway"} {
		if entries, _ := os.ReadDir(filepath.Join(w1dir, d)); len(entries) > 0 {
			t.Errorf("the stopped worker left %s/%s", d, entries[0].Name())
		}
	}

	os.Remove(hold)
	w2 := startWorker(t, r, srv.address, filepath.Join(t.TempDir(), "w2"), "w2")
	if code := coord.wait(2 * time.Minute); code != 0 {
		t.Fatalf("the coordinator exited %d:\n%s", code, coord.out)
	}
	w2.stopCleanly()
	r.CheckFinal()
	s := r.CheckState("at the end")
	if m := s.Metas[1]; m == nil || m.Outcome != state.OutcomeInterrupted || m.Worker != "w1" {
		t.Errorf("iteration 1: %+v, want interrupted on w1", m)
	}
}

// TestEngineWorkerLostInItsGuards kills the only worker while its guards
// run, after it pushed the agent's work. The activity times out, but the
// workflow's last step runs on a worker: until one polls, status says the
// iteration was lost and waits. Then the coordinator records it
// interrupted and keeps that work as the attempt's
// (refs/runner/attempts/N), as a local runner keeps an interrupted
// attempt's work; the task is then done on the new worker.
func TestEngineWorkerLostInItsGuards(t *testing.T) {
	marks := t.TempDir()
	hold, inGuard := filepath.Join(marks, "hold"), filepath.Join(marks, "in-guard")
	srv, r, _ := engineRepo(t, e2e.FlatTree("lost", 1, 0), func(address, remote string) string {
		return fmt.Sprintf(`
[sandbox]
mode = "off"

[[guard]]
name = "held"
run = "touch %[1]s; while [ -e %[2]s ]; do sleep 0.05; done; test -f \"work/$RUNNER_NODE_ID.txt\""
timeout = "2m"

[engine]
address = %[3]q
remote = %[4]q
parallel = 1
heartbeat = "3s"
`, inGuard, hold, address, remote)
	}, e2e.CrashSteadyEnv+` = "1"`)
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(hold)
	// The config asks for no sandbox: the workers let it (their floor off).
	w1 := startWorkerWith(t, r, srv.address, filepath.Join(t.TempDir(), "w1"), "w1", nil, "--sandbox", "off")
	coord := startCoordinator(t, r)
	awaitCond(t, 90*time.Second, "the guard running on w1", coord, func() bool { return fileExists(inGuard) })
	w1.kill()
	// Its activity times out; until a worker polls, the workflow's last
	// step waits, and status says so.
	awaitCond(t, time.Minute, "status to say the iteration was lost and waits for a worker", coord, func() bool {
		return strings.Contains(r.RunRunner(time.Minute, 0, nil, "status").Out, "lost (its worker stopped answering) on worker w1; what came of it waits for a worker")
	})
	os.Remove(inGuard)
	w2 := startWorkerWith(t, r, srv.address, filepath.Join(t.TempDir(), "w2"), "w2", nil, "--sandbox", "off")
	awaitCond(t, time.Minute, "iteration 1 recorded", coord, func() bool {
		m, err := state.LoadMeta(r.Paths.RunDir(1))
		return err == nil && m.Phase == state.PhaseRecorded
	})
	m, _ := state.LoadMeta(r.Paths.RunDir(1))
	if m.Outcome != state.OutcomeInterrupted || !strings.Contains(m.Note, "it is kept as this attempt's") {
		t.Errorf("iteration 1: outcome %s, note %q; want interrupted, its pushed work kept", m.Outcome, m.Note)
	}
	if files := r.Git("ls-tree", "-r", "--name-only", "refs/runner/attempts/1"); !strings.Contains(files, "work/lost-000.txt") {
		t.Errorf("the attempt of iteration 1 lacks the work its worker pushed:\n%s", files)
	}

	os.Remove(hold)
	if code := coord.wait(2 * time.Minute); code != 0 {
		t.Fatalf("the coordinator exited %d:\n%s", code, coord.out)
	}
	w2.stopCleanly()
	r.CheckFinal()
}

// heldTask is engineRepo with one task, named after prefix, whose crash
// agent writes work/<task>.started and then waits while the returned
// hold file exists (it does until the test removes it, at the latest
// when it ends).
func heldTask(t *testing.T, prefix string) (*devServer, *e2e.Repo, string, string) {
	t.Helper()
	hold := filepath.Join(t.TempDir(), "hold")
	srv, r, remote := engineRepo(t, e2e.FlatTree(prefix, 1, 0), engineConf("", 1, ""), e2e.CrashSteadyEnv+` = "1"`, e2e.CrashHoldEnv+" = "+e2e.TomlString(hold), e2e.CrashEarlyEnv+` = "1"`)
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(hold) })
	return srv, r, remote, hold
}

// TestEngineWorkerFailsAfterTheAgent makes the remote refuse the first
// result a worker pushes (a pre-receive hook): the worker fails after its
// agent ran. It pushes what the agent had written to the iteration's
// leftover ref instead, the coordinator records the iteration
// interrupted (an attempt: an agent worked) and names that ref, and the
// next attempt lands.
func TestEngineWorkerFailsAfterTheAgent(t *testing.T) {
	srv, r, remote := engineRepo(t, e2e.FlatTree("fail", 1, 0), engineConf("", 1, ""), e2e.CrashSteadyEnv+` = "1"`)
	refused := filepath.Join(t.TempDir(), "refused")
	hook := fmt.Sprintf("#!/bin/sh\nwhile read old new ref; do\n  case $ref in */result) if [ ! -e %[1]s ]; then touch %[1]s; echo 'results are refused once' >&2; exit 1; fi;; esac\ndone\n", refused)
	if err := os.WriteFile(filepath.Join(remote, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	w := startWorker(t, r, srv.address, filepath.Join(t.TempDir(), "w"), "w")
	if res := r.RunRunner(3*time.Minute, 0, nil, "run"); res.Code != 0 {
		t.Fatalf("runner run exited %d:\n%s\nworker:\n%s", res.Code, res.Out, w.out)
	}
	w.stopCleanly()
	if !fileExists(refused) {
		t.Fatal("the remote's hook never refused a result: the test tests nothing")
	}
	r.CheckFinal()
	s := r.CheckState("at the end")
	m := s.Metas[1]
	ref := engine.LeftoverRef(runIDOf(t, r), 1, 0)
	if m == nil || m.Outcome != state.OutcomeInterrupted || !strings.Contains(m.Note, "its worker failed: ") || !strings.Contains(m.Note, ref) {
		t.Errorf("iteration 1: %+v; want interrupted, its worker's failure and %s in its note", m, ref)
	}
	if out, err := exec.Command("git", "--git-dir", remote, "ls-tree", "-r", "--name-only", ref).CombinedOutput(); err != nil || !strings.Contains(string(out), "work/fail-000.txt") {
		t.Errorf("the failed iteration's work at %s: %v\n%s", ref, err, out)
	}
	if m := s.Metas[2]; m == nil || m.Outcome != state.OutcomeDone {
		t.Errorf("iteration 2: %+v, want done", m)
	}
}
