package workers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/runner-cli/runner/e2e"
	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/engine"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/state"
)

// TestEngineWorkers runs a tree on two `runner worker` processes through
// a real Temporal dev server (SPEC §22), and breaks everything once, each
// while agents are known to be at work (held by CRASH_HOLD): a worker is
// SIGKILLed (its agent must die with it, its iteration be recorded
// interrupted and tried again, and the worker started again in its
// folder must push what the agent had written to the remote), the
// coordinator is SIGKILLed and started again (what the workers finished
// meanwhile is recorded exactly once), and the Temporal service is
// stopped and started again on its database.
// At the end every task is done with exactly one commit on the run
// branch, every iteration recorded once and its agent run at most once,
// no process is left, both repositories pass `git fsck`, and the
// workers' repositories keep no ref of an iteration.
//
// It needs the `temporal` CLI: RUNNER_TEMPORAL, or `temporal` on PATH or
// in GOPATH/bin (.ci/run builds it there). Outside CI it skips without
// one.
func TestEngineWorkers(t *testing.T) {
	hold := filepath.Join(t.TempDir(), "hold")
	const slots = 4 // two workers, two each
	srv, r, remote := engineRepo(t, engineTree(), engineConf("", slots, `heartbeat = "20s"`+"\n"),
		e2e.CrashSteadyEnv+` = "1"`, e2e.CrashSlowEnv+` = "600"`, fmt.Sprintf("%s = \"%d\"", e2e.CrashSlotsEnv, slots),
		e2e.CrashHoldEnv+" = "+e2e.TomlString(hold), e2e.CrashEarlyEnv+` = "1"`)

	holdOn := func() { os.WriteFile(hold, nil, 0o644) }
	holdOff := func() { os.Remove(hold) }
	holdOn()
	w1dir, w2dir := filepath.Join(t.TempDir(), "w1"), filepath.Join(t.TempDir(), "w2")
	w1 := startWorker(t, r, srv.address, w1dir, "w1")
	w2 := startWorker(t, r, srv.address, w2dir, "w2")

	// A worker killed while its agent works: the agent dies with it.
	coord := startCoordinator(t, r)
	// Four tasks can start, two per worker: both of w1's are at work.
	var onW1 map[string]bool
	awaitCond(t, 90*time.Second, "two agents at work on w1, each having written", coord, func() bool {
		onW1 = r.IterationsOf(r.AgentsOn(w1dir))
		return len(onW1) == 2 && len(startedIn(w1dir, "eng-")) == 2
	})
	w1.kill()
	awaitCond(t, 15*time.Second, "w1's agent gone with it", coord, func() bool {
		return len(e2e.LiveWithEnv(engine.DirEnv+"="+w1dir)) == 0
	})
	w1 = startWorker(t, r, srv.address, w1dir, "w1b")
	// Started again in its folder, it keeps what the killed agents had
	// written: on the remote, as a commit of their checkpoint.
	run := runIDOf(t, r)
	for n := range onW1 {
		ref := "refs/runner/engine/" + run + "/" + n + ".0/leftover"
		awaitCond(t, time.Minute, "the work of iteration "+n+" kept at "+ref, coord, func() bool {
			out, err := exec.Command("git", "--git-dir", remote, "ls-tree", "-r", "--name-only", ref).Output()
			return err == nil && strings.Contains(string(out), ".started")
		})
	}

	// The coordinator killed while agents work; they finish meanwhile.
	awaitCond(t, 60*time.Second, "an agent at work on w2", coord, func() bool { return len(r.AgentsOn(w2dir)) > 0 })
	coord.kill()
	holdOff()
	awaitCond(t, 60*time.Second, "the workers idle", nil, func() bool { return len(r.AgentProcesses()) == 0 })

	// The coordinator again, which cancels a workflow of its run that
	// no iteration expects; and the Temporal service stopped and started
	// again while agents work.
	orphan := submitOrphan(t, r, srv)
	holdOn()
	coord = startCoordinator(t, r)
	awaitCond(t, 90*time.Second, "an agent at work after the restart", coord, func() bool { return len(r.AgentProcesses()) > 0 })
	srv.stop()
	srv = startDevServer(t, temporalCLI(t), srv.db, srv.port)
	holdOff()

	if code := coord.wait(5 * time.Minute); code != 0 {
		t.Fatalf("the coordinator exited %d:\n%s\nw1:\n%s\nw2:\n%s", code, coord.out, w1.out, w2.out)
	}
	if !cancelRequested(t, srv, orphan) {
		t.Errorf("the workflow %s, which no iteration expects, was not cancelled:\n%s", orphan, coord.out)
	}
	if !strings.Contains(coord.out.String(), "tree complete") {
		t.Errorf("the coordinator did not complete the tree:\n%s", coord.out)
	}
	w1.stopCleanly()
	w2.stopCleanly()
	t.Logf("the coordinator, started again:\n%s", coord.out)

	r.CheckFinal()
	// One commit per task on the run branch, each naming its worker's
	// iteration; the killed worker's iteration was interrupted.
	nodes := strings.Fields(r.Git("log", "--format=%(trailers:key=Runner-Node,valueonly)", "runner/eng"))
	slices.Sort(nodes)
	want := []string{"eng-a1", "eng-a2", "eng-a3", "eng-a4", "eng-b1", "eng-b2", "eng-c1", "eng-c2"}
	if !slices.Equal(nodes, want) {
		t.Errorf("task commits on the run branch: %v, want one each of %v", nodes, want)
	}
	s := r.CheckState("at the end")
	interrupted, workers := 0, map[string]bool{}
	for _, m := range s.Metas {
		if m.Outcome == state.OutcomeInterrupted {
			interrupted++
		}
		if m.Outcome == state.OutcomeDone {
			workers[m.Worker] = true
			if abi, _ := sandbox.ABI(); abi > 0 && m.Unconfined != "" {
				t.Errorf("iteration %d ran unconfined on worker %s: %s", m.Iteration, m.Worker, m.Unconfined)
			}
		}
	}
	if interrupted == 0 {
		t.Errorf("no iteration was recorded interrupted, though a worker was killed while its agent worked")
	}
	// Only the killed worker's: the coordinator's death and the service's
	// restart cost no iteration.
	for n, m := range s.Metas {
		if m.Outcome == state.OutcomeInterrupted && (!onW1[strconv.Itoa(n)] || m.Worker != "w1" && m.Worker != "") {
			t.Errorf("iteration %d on worker %q was interrupted (%s); only those of the killed worker w1 may be, %v", n, m.Worker, m.Note, onW1)
		}
		if m.Outcome == state.OutcomeInterrupted && !strings.Contains(m.Note, fmt.Sprintf("/%d.0/leftover on %s", n, remote)) {
			t.Errorf("iteration %d, interrupted on its killed worker, does not say where its work is kept: %q", n, m.Note)
		}
	}
	if !workers["w2"] || !workers["w1"] && !workers["w1b"] {
		t.Errorf("done iterations ran on workers %v, want w2 and w1 (or w1b, w1 started again)", workers)
	}
	// show and the report name each iteration's worker.
	for n, m := range s.Metas {
		if m.Outcome != state.OutcomeDone {
			continue
		}
		if out := r.RunRunner(time.Minute, 0, nil, "show", strconv.Itoa(n)).Out; !strings.Contains(out, "worker:   "+m.Worker) {
			t.Errorf("runner show %d does not name its worker %s:\n%s", n, m.Worker, out)
		}
		if out := r.RunRunner(time.Minute, 0, nil, "report").Out; !strings.Contains(out, fmt.Sprintf("#%d **eng/%s**", n, m.Node)) || !strings.Contains(out, "on worker "+m.Worker) {
			t.Errorf("runner report does not name iteration %d's worker %s:\n%s", n, m.Worker, out)
		}
		break
	}
	for _, dir := range []string{r.Root, remote} {
		if out, err := exec.Command("git", "-C", dir, "fsck", "--no-progress").CombinedOutput(); err != nil {
			t.Errorf("git fsck in %s: %v\n%s", dir, err, out)
		}
	}
	for _, dir := range []string{w1dir, w2dir} {
		if left := e2e.LiveWithEnv(engine.DirEnv + "=" + dir); len(left) > 0 {
			t.Errorf("processes left by the worker in %s: %v", dir, left)
		}
		// A worker keeps no ref of an iteration that ended, nor of one a
		// killed worker left (w1, started again in its folder).
		if out, err := exec.Command("git", "-C", filepath.Join(dir, "repo"), "for-each-ref", "refs/runner/engine/").CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("refs left in the worker's repository in %s (%v):\n%s", dir, err, out)
		}
	}
	engineCtrlC(t, r, srv, remote, hold, w1dir, w2dir)
}

// engineCtrlC interrupts a coordinator while its iterations' agents work
// on the workers: each is cancelled there (its agent stopped, what it had
// written pushed to the remote, its workflow closed) and recorded
// interrupted.
func engineCtrlC(t *testing.T, r *e2e.Repo, srv *devServer, remote, hold, w1dir, w2dir string) {
	e2e.AddFlatTasks(t, r, "ctl", 2, 0)
	w1 := startWorker(t, r, srv.address, w1dir, "w1")
	w2 := startWorker(t, r, srv.address, w2dir, "w2")
	os.WriteFile(hold, nil, 0o644)
	defer os.Remove(hold)
	coord := startCoordinator(t, r)
	awaitCond(t, 90*time.Second, "two iterations' agents at work, each having written", coord, func() bool {
		return len(r.IterationsAtWork()) >= 2 && len(startedIn(w1dir, "ctl-"))+len(startedIn(w2dir, "ctl-")) >= 2
	})
	awaitCond(t, 30*time.Second, "status naming the workers", coord, func() bool {
		return strings.Count(r.RunRunner(time.Minute, 0, nil, "status").Out, ", on worker w") >= 2
	})
	if out := r.RunRunner(time.Minute, 0, nil, "status").Out; !strings.Contains(out, "engine:     temporal "+srv.address+", task queue runner") {
		t.Errorf("status does not say where the iterations run:\n%s", out)
	}
	// The workers' heartbeats say what they do.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := srv.client(t)
	run := runIDOf(t, r)
	awaitCond(t, 30*time.Second, "a heartbeat saying the agent works", coord, func() bool {
		for n := range r.IterationsAtWork() {
			i, _ := strconv.Atoi(n)
			if st, err := engine.Describe(ctx, c, engine.WorkflowID(run, i, 0)); err == nil && st.Phase == "agent" && st.Worker != "" {
				return true
			}
		}
		return false
	})
	coord.interrupt()
	if code := coord.cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("the interrupted coordinator exited %d, want 130:\n%s", code, coord.out)
	}
	// Nothing keeps running on the workers: the coordinator waits for the
	// cancellation to reach them before it records the iterations.
	if left := r.AgentProcesses(); len(left) > 0 {
		t.Errorf("agents still at work on the workers after Ctrl-C: %v", left)
	}
	s := r.CheckState("after Ctrl-C")
	interrupted := 0
	for n, m := range s.Metas {
		if !strings.HasPrefix(m.Node, "ctl-") {
			continue
		}
		if m.Outcome != state.OutcomeInterrupted {
			t.Errorf("iteration %d (%s) after Ctrl-C: outcome %q (phase %s, note %q), want interrupted; the coordinator said:\n%s", n, m.Node, m.Outcome, m.Phase, m.Note, coord.out)
		}
		interrupted++
		if st, err := engine.Describe(ctx, c, engine.WorkflowID(run, n, 0)); err != nil || st.Running {
			t.Errorf("iteration %d's workflow after Ctrl-C: %+v, %v; want closed", n, st, err)
		}
		// What its agent had written is kept on the remote, as a local
		// runner keeps an interrupted attempt's work.
		ref := engine.LeftoverRef(run, n, 0)
		if out, err := exec.Command("git", "--git-dir", remote, "ls-tree", "-r", "--name-only", ref).CombinedOutput(); err != nil || !strings.Contains(string(out), "work/"+m.Node+".started") {
			t.Errorf("iteration %d's work after Ctrl-C, at %s: %v\n%s", n, ref, err, out)
		}
		if !strings.Contains(m.Note, ref) {
			t.Errorf("iteration %d's note does not say where its work is: %q", n, m.Note)
		}
	}
	if interrupted != 2 {
		t.Errorf("%d iterations of the new tasks recorded, want the two at work", interrupted)
	}
	w1.stopCleanly()
	w2.stopCleanly()
}

// submitOrphan starts a workflow of r's run that no iteration expects,
// on a task queue no worker polls, and returns its id.
func submitOrphan(t *testing.T, r *e2e.Repo, srv *devServer) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := srv.client(t)
	in := engine.Input{Run: runIDOf(t, r), Iteration: 999, Node: "none", Timeout: time.Hour, Heartbeat: time.Minute}
	run, err := engine.Submit(ctx, c, "no-worker", nil, in)
	if err != nil {
		t.Fatal(err)
	}
	return run.GetID()
}

// cancelRequested reports whether workflow id's history holds a request
// to cancel it.
func cancelRequested(t *testing.T, srv *devServer, id string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := srv.client(t)
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatalf("the history of %s: %v", id, err)
		}
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED {
			return true
		}
	}
	return false
}

// runIDOf is the run's id, which names its workflows.
func runIDOf(t *testing.T, r *e2e.Repo) string {
	t.Helper()
	var v struct {
		Run string `json:"run"`
	}
	if err := json.Unmarshal([]byte(e2e.ReadFile(t, filepath.Join(r.Paths.StateDir(), "engine.json"))), &v); err != nil || v.Run == "" {
		t.Fatalf("state/engine.json: %v", err)
	}
	return v.Run
}

// TestEngineRateLimit: an agent on a worker that hits a usage or rate
// limit spends no attempt; the coordinator waits it out as for a local
// agent and submits the iteration again, under a workflow id of its own
// (…-r1), and the task lands once. Before the run, `runner doctor` sees
// the service, the worker and the remote.
func TestEngineRateLimit(t *testing.T) {
	// Both tasks may be at work at once (engine.parallel = 2).
	srv, r, _ := engineRepo(t, e2e.FlatTree("lim", 2, 0), engineConf("rate_limit_backoff = \"200ms\"\nrate_limit_backoff_max = \"500ms\"\n", 2, ""), e2e.CrashSteadyEnv+` = "1"`, e2e.CrashLimitsEnv+` = "always"`, e2e.CrashSlotsEnv+` = "2"`, e2e.CrashEarlyEnv+` = "1"`)
	w := startWorker(t, r, srv.address, filepath.Join(t.TempDir(), "w"), "w")
	// `runner doctor` sees the service, the worker polling and the remote.
	var doctor e2e.RunnerResult
	awaitCond(t, time.Minute, "runner doctor to see worker w", nil, func() bool {
		doctor = r.RunRunner(time.Minute, 0, nil, "doctor")
		return strings.Contains(doctor.Out, "workers:  w (polled ")
	})
	if !strings.Contains(doctor.Out, "s ago, same key)") {
		t.Errorf("runner doctor does not say the worker holds the same key:\n%s", doctor.Out)
	}
	if !strings.Contains(doctor.Out, "engine:   temporal "+srv.address) || !strings.Contains(doctor.Out, ": git reaches it") {
		t.Errorf("runner doctor:\n%s", doctor.Out)
	}
	if res := r.RunRunner(3*time.Minute, 0, nil, "run"); res.Code != 0 {
		t.Fatalf("runner run exited %d:\n%s", res.Code, res.Out)
	}
	w.stopCleanly()
	r.CheckFinal()
	s := r.CheckState("at the end")
	c := srv.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run := runIDOf(t, r)
	for n, m := range s.Metas {
		if m.Outcome != state.OutcomeDone || m.Attempt != 1 {
			t.Errorf("iteration %d (%s): outcome %s on attempt %d, want done on the first", n, m.Node, m.Outcome, m.Attempt)
		}
		for retry, want := range []bool{true, true, false} {
			st, err := engine.Describe(ctx, c, engine.WorkflowID(run, n, retry))
			if err != nil || st.Found != want {
				t.Errorf("iteration %d, agent run %d: workflow found %v (%v), want %v", n, retry, st.Found, err, want)
			}
		}
	}
	if len(s.Metas) != 2 {
		t.Errorf("%d iterations, want one per task", len(s.Metas))
	}
	// The run after the limit went on with what the limited one wrote,
	// as in a local slot's worktree.
	files := strings.Fields(r.Git("ls-tree", "-r", "--name-only", "runner/lim"))
	for _, m := range s.Metas {
		if !slices.Contains(files, "work/"+m.Node+".limited") {
			t.Errorf("the run branch lacks what task %s's limited run wrote (work/%s.limited): %v", m.Node, m.Node, files)
		}
	}
}

// engineConf is the config most engine tests add: loop keys (the crash
// repository's [loop] table is open), the task-file guard, and [engine]
// on the test's service and remote with parallel iterations in flight,
// and more keys of its own.
func engineConf(loop string, parallel int, engine string) func(address, remote string) string {
	return func(address, remote string) string {
		return fmt.Sprintf("%s%s\n[engine]\naddress = %q\nremote = %q\nparallel = %d\n%s", loop, e2e.TaskGuard, address, remote, parallel, engine)
	}
}

// engineRepo is what every engine test starts from: a dev server, a bare
// remote (its path is returned), and a crash repository committed on main whose config adds
// conf(the server's address, the remote).
func engineRepo(t *testing.T, treeJSON string, conf func(address, remote string) string, agentEnv ...string) (*devServer, *e2e.Repo, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	srv := startDevServer(t, temporalCLI(t), filepath.Join(t.TempDir(), "temporal.db"), 0)
	// Coordinators and workers sign what they exchange with the same key.
	t.Setenv(engine.KeyEnv, writeEngineKey(t, "the tests' engine key"))
	remote := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", remote).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v\n%s", err, out)
	}
	r := e2e.NewRepo(t, treeJSON, conf(srv.address, remote), agentEnv...)
	r.Git("init", "-q", "-b", "main")
	r.Write("README", "the project\n")
	r.Write(".gitignore", ".runner/runs/\n.runner/context/\n.runner/state/\n.runner/lock\n")
	r.Git("add", "-A")
	r.Git("-c", "user.name=Person", "-c", "user.email=p@example.com", "commit", "-qm", "the project")
	return srv, r, remote
}

// writeEngineKey writes an engine key file made of seed, readable by its
// owner only, and returns its path.
func writeEngineKey(t *testing.T, seed string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "engine.key")
	if err := os.WriteFile(p, []byte(strings.Repeat(seed, 1+engine.MinKeyLen/len(seed))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// startedIn lists the files the crash agents of tasks whose ids begin
// with prefix wrote before they were held (crashEarlyEnv), in the
// worktrees of the worker in dir.
func startedIn(dir, prefix string) []string {
	found, _ := filepath.Glob(filepath.Join(dir, "work", "*", "work", prefix+"*.started"))
	return found
}

// engineTree is eight tasks with dependencies: four independent, two
// after one each, two after two each.
func engineTree() string {
	return `{"version": 1, "root": {"id": "eng", "title": "Engine", "children": [
  {"id": "eng-a1", "title": "A1"}, {"id": "eng-a2", "title": "A2"},
  {"id": "eng-a3", "title": "A3"}, {"id": "eng-a4", "title": "A4"},
  {"id": "eng-b1", "title": "B1", "depends_on": ["eng-a1"]},
  {"id": "eng-b2", "title": "B2", "depends_on": ["eng-a2"]},
  {"id": "eng-c1", "title": "C1", "depends_on": ["eng-b1", "eng-b2"]},
  {"id": "eng-c2", "title": "C2", "depends_on": ["eng-a3", "eng-a4"]}
]}}
`
}

// temporalCLI finds the temporal CLI, or skips (fails under CI).
func temporalCLI(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("RUNNER_TEMPORAL"); p != "" {
		return p
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, dir := range filepath.SplitList(strings.TrimSpace(string(out))) {
			if p := filepath.Join(dir, "bin", "temporal"); fileExists(p) {
				return p
			}
		}
	}
	const how = "no temporal CLI (RUNNER_TEMPORAL, PATH, GOPATH/bin): `go install github.com/temporalio/cli/cmd/temporal@v1.5.1` builds it; .ci/run does"
	if os.Getenv("CI") != "" {
		t.Fatal(how)
	}
	t.Skip(how)
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// devServer is a `temporal server start-dev` of a test.
type devServer struct {
	t       *testing.T
	cmd     *exec.Cmd
	out     *bytes.Buffer
	db      string
	port    int
	address string
	done    chan struct{}
}

// startDevServer starts a dev server on 127.0.0.1:port (0: a free one)
// with its state in db, and waits until it answers.
func startDevServer(t *testing.T, bin, db string, port int) *devServer {
	t.Helper()
	if port == 0 {
		port = freePort(t)
	}
	s := &devServer{t: t, db: db, port: port, address: "127.0.0.1:" + strconv.Itoa(port), out: &bytes.Buffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(bin, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", strconv.Itoa(port),
		"--http-port", strconv.Itoa(freePort(t)), "--metrics-port", strconv.Itoa(freePort(t)),
		"--db-filename", db, "--log-level", "error")
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start the Temporal dev server: %v", err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	t.Cleanup(s.stop)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for {
		c, err := engine.Dial(ctx, config.Engine{Address: s.address, Namespace: "default"}, "test")
		if err == nil {
			c.Close()
			return s
		}
		select {
		case <-s.done:
			t.Fatalf("the Temporal dev server exited:\n%s", s.out)
		case <-ctx.Done():
			t.Fatalf("the Temporal dev server did not answer within 90s: %v\n%s", err, s.out)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// client is a client of the server for the test, closed at its end.
func (s *devServer) client(t *testing.T) client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := engine.Dial(ctx, config.Engine{Address: s.address, Namespace: "default"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// stop stops the server (SIGTERM, then SIGKILL after 20 s) and waits for
// it.
func (s *devServer) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// proc is a runner process of a test: a worker or a coordinator.
type process struct {
	t    *testing.T
	cmd  *exec.Cmd
	out  *e2e.SyncBuffer
	done chan struct{}
}

func startProcess(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	p := &process{t: t, cmd: cmd, out: &e2e.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(p.kill)
	return p
}

// startWorker starts `runner worker` in dir; its agents share the
// crash agents' run (CRASH_RUN), so that only an agent of the same task,
// or more than the slots, is an overlap.
func startWorker(t *testing.T, r *e2e.Repo, address, dir, name string) *process {
	t.Helper()
	return startWorkerWith(t, r, address, dir, name, nil)
}

func startCoordinator(t *testing.T, r *e2e.Repo) *process {
	t.Helper()
	cmd, _ := r.RunnerCmd(nil, "run")
	return startProcess(t, cmd)
}

func (p *process) kill() {
	select {
	case <-p.done:
	default:
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
}

// interrupt stops the process as Ctrl-C does and waits for it (a minute
// and a half at most).
func (p *process) interrupt() {
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(90 * time.Second):
		p.t.Errorf("%v did not stop within 90s of an interrupt:\n%s", p.cmd.Args, p.out)
		p.kill()
	}
}

// stopCleanly interrupts a worker, which must exit 0 (a race-built test
// binary exits 66 when it found a data race).
func (p *process) stopCleanly() {
	p.interrupt()
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		p.t.Errorf("%v exited %d after an interrupt:\n%s", p.cmd.Args, code, p.out)
	}
}

// wait waits for the process to exit by itself, at most limit, and
// returns its exit code.
func (p *process) wait(limit time.Duration) int {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		p.t.Fatalf("%v did not finish within %s:\n%s", p.cmd.Args, limit, p.out)
		return -1
	}
}

// awaitCond polls cond until it holds, failing the test after limit or
// when the coordinator (nil: none running) exits first.
func awaitCond(t *testing.T, limit time.Duration, what string, coord *process, cond func() bool) {
	t.Helper()
	var exited <-chan struct{}
	if coord != nil {
		exited = coord.done
	}
	for end := time.Now().Add(limit); !cond(); time.Sleep(50 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("waiting for %s, the coordinator exited %d:\n%s", what, coord.cmd.ProcessState.ExitCode(), coord.out)
		default:
		}
		if time.Now().After(end) {
			t.Fatalf("waited %s for %s", limit, what)
		}
	}
}
