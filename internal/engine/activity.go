package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/live"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/verify"
)

// FailureType is the type of the error of an activity that failed on the
// worker's side (its git, its disk, a config it cannot use), not the
// agent's; SetupFailureType that of one that failed so before its agent
// started, which costs the task no attempt.
const (
	FailureType      = "runner.worker"
	SetupFailureType = "runner.worker.setup"
)

// iterationRun is one iteration on this worker: where it works.
type iterationRun struct {
	in       Input
	cfg      *config.Config
	work     string // its linked worktree, at the checkpoint
	runDir   string
	tmp      string
	room     *sandbox.Room // nil: not confined
	why      string        // why not confined
	openings []string      // what the room leaves open
	wt       *git.Repo
	phase    func(string)
	// agent says the agent was started (or tried to be): a failure after
	// it is not a failure of the setup.
	agent bool
}

// runIteration is the activity: one iteration's agent, its work pushed
// as a commit, then its guards and checks, as a local slot runs them.
// Nothing of an input the worker's key does not verify runs; what it
// sends back is signed for the iteration.
func (w *Worker) runIteration(ctx context.Context, signed Signed) (*Signed, error) {
	w.active.Add(1)
	defer w.active.Done()
	id := activity.GetInfo(ctx).WorkflowExecution.ID
	in, err := w.Key.OpenInput(id, &signed)
	if err != nil {
		err = inputRefusal(err)
		w.logf("workflow %s: REFUSED before anything ran: %v", inert.Line(id), err)
		return nil, refusal(err)
	}
	it := &iterationRun{in: in}
	var mu sync.Mutex
	var phase string
	progress := func() Progress {
		mu.Lock()
		defer mu.Unlock()
		p := Progress{Worker: w.Name, Phase: phase}
		switch phase {
		case "agent":
			p.Event = live.LatestEvent(filepath.Join(it.runDir, executor.EventsFileName))
			if p.Event == "" {
				p.Event = "the agent works" // a CLI without an event stream
			}
		case "guards":
			p.Event = "running the guards"
		case "fetching":
			p.Event = "fetching the checkpoint"
		}
		return p
	}
	it.phase = func(p string) {
		mu.Lock()
		phase = p
		mu.Unlock()
		activity.RecordHeartbeat(ctx, progress())
	}
	stop := w.beat(ctx, in.Heartbeat, progress)
	defer stop()
	w.logf("#%d %s: started (%s)", in.Iteration, in.Node, id)
	out, err := w.iterate(ctx, id, it)
	if err != nil {
		w.keepUnfinished(it)
	}
	w.tidy(id, it)
	w.forget(it)
	switch {
	case err != nil && ctx.Err() != nil:
		w.logf("#%d %s: cancelled", in.Iteration, in.Node)
		return nil, ctx.Err()
	case isRefused(err):
		w.logf("#%d %s: REFUSED before anything ran: %v", in.Iteration, in.Node, err)
		return nil, refusal(err)
	case err != nil:
		w.logf("#%d %s: failed: %v", in.Iteration, in.Node, err)
		kind := FailureType
		if !it.agent {
			kind = SetupFailureType
		}
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), kind, err)
	}
	w.logf("#%d %s: finished", in.Iteration, in.Node)
	return w.Key.signOutput(id, in, out)
}

// beat records a heartbeat every third of the heartbeat timeout, every
// heartbeatEvery at most, until stop; a cancelled workflow cancels ctx at
// the next one.
func (w *Worker) beat(ctx context.Context, timeout time.Duration, progress func() Progress) (stop func()) {
	every := min(max(timeout/3, 100*time.Millisecond), heartbeatEvery)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, progress())
			}
		}
	}()
	return func() { close(done) }
}

// iterate runs it; the error is the worker's own failure or the end of
// ctx.
func (w *Worker) iterate(ctx context.Context, id string, it *iterationRun) (*Output, error) {
	in := it.in
	cfg, err := config.Parse("config.toml (sent by the coordinator)", in.Config)
	if err != nil {
		return nil, err
	}
	it.cfg = cfg
	if err := w.admit(cfg); err != nil {
		return nil, err
	}
	ex, ok := executorNamed(cfg, in.Executor)
	if !ok {
		return nil, fmt.Errorf("the config has no executor named %q", in.Executor)
	}
	if err := w.checkout(ctx, id, it); err != nil {
		return nil, err
	}
	if err := w.confineOrSay(it); err != nil {
		return nil, err
	}
	out := &Output{Worker: w.Name, Unconfined: it.why, Openings: it.openings, Files: map[string][]byte{}}
	it.phase("agent")
	req := executor.Request{
		Root: it.work, RunnerDir: it.runDir, RunDir: it.runDir, Iteration: in.Iteration, NodeID: in.Node,
		Prompt: in.Prompt, PromptFile: filepath.Join(it.runDir, "prompt.md"), SchemaFile: filepath.Join(it.runDir, "output.schema.json"),
		Confine: it.room, OutputDir: it.tmp, Env: it.env(w.Dir), Retry: 0,
	}
	judged := it.judged()
	it.agent = true
	opts := executor.OptionsFrom(ex, executor.CompilePatterns(ex.RateLimitPatterns))
	opts.Allowance = in.Allowance
	run, err := iteration.RunProgram(ctx, iteration.Spec{
		Request: req, Executor: opts,
		Judged: judged, TamperDir: filepath.Join(it.runDir, "tamper"), TamperPrefix: "tamper/",
	})
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if run.StartErr != nil {
		out.StartErr = run.StartErr.Error()
		return out, nil
	}
	out.Agent = run.Result
	it.phase("pushing")
	if out.Result, err = w.pushWork(ctx, it); err != nil {
		return nil, err
	}
	if len(run.Tamper) == 0 && w.judges(it, run.Result) {
		it.phase("guards")
		j, err := iteration.Judge(ctx, it.guards(w.Dir), it.runDir, iteration.Hooks{})
		if err != nil {
			return nil, err
		}
		out.Judgement = &j
	}
	if len(run.Tamper) > 0 {
		out.Judgement = &iteration.Judgement{Tamper: run.Tamper, Verdict: state.GuardFail}
	}
	out.Files = collectFiles(it.runDir)
	return out, nil
}

// judges says whether the guards and checks judge the agent's work: it
// says done, and something judges the task.
func (w *Worker) judges(it *iterationRun, res *executor.Result) bool {
	if res == nil || res.Class != executor.ClassOK || res.Message == nil || res.Message.Status != "done" {
		return false
	}
	return len(it.cfg.Guards) > 0 || len(it.in.Checks) > 0
}

// checkout fetches the checkpoint and makes the iteration's worktree,
// run folder and temporary directory.
func (w *Worker) checkout(ctx context.Context, id string, it *iterationRun) error {
	in := it.in
	it.phase("fetching")
	w.gitMu.Lock()
	err := w.repo.Fetch(ctx, in.Remote, "+"+in.CheckpointRef+":"+in.CheckpointRef)
	w.gitMu.Unlock()
	if err != nil {
		return err
	}
	name := safeName(id)
	it.work = filepath.Join(w.Dir, "work", name)
	it.runDir = filepath.Join(w.Dir, "runs", name)
	it.tmp = filepath.Join(w.Dir, "tmp", name)
	w.tidy(id, it)
	for _, d := range []string{filepath.Dir(it.work), it.runDir, it.tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	w.gitMu.Lock()
	wt, _, err := w.repo.AddDetachedWorktree(ctx, it.work, in.Checkpoint)
	w.gitMu.Unlock()
	if err != nil {
		return err
	}
	it.wt = wt
	if err := w.noteUnderway(it); err != nil {
		return err
	}
	setupLog := filepath.Join(it.runDir, "setup.log")
	if _, err := wt.RunSetup(ctx, it.cfg.Git.Setup, setupLog, it.cfg.Git.SetupTimeout.Duration, w.Room(it.cfg, it.work, it.tmp)); err != nil {
		return fmt.Errorf("git.setup: %w%s", err, logEnd(setupLog))
	}
	if err := os.WriteFile(filepath.Join(it.runDir, "prompt.md"), in.Prompt, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(it.runDir, "output.schema.json"), in.Schema, 0o644)
}

// confineOrSay sets the iteration's room as the config's [sandbox] asks,
// and what it leaves open: a worker confines its agent and guards to
// their worktree as a local slot does.
func (w *Worker) confineOrSay(it *iterationRun) error {
	if it.cfg.Sandbox.Mode == config.SandboxOff {
		it.why = `sandbox.mode = "off"`
		return nil
	}
	if abi, err := sandbox.ABI(); abi < 1 {
		it.why = err.Error()
		if it.cfg.Sandbox.Mode == config.SandboxRequired {
			return fmt.Errorf(`sandbox.mode = "required": the agent cannot be confined on this worker: %s`, it.why)
		}
		return nil
	}
	if it.room = w.Room(it.cfg, it.work, it.tmp); it.room != nil {
		it.openings = w.layers(it.cfg.Sandbox.MaxProcesses).Openings()
	}
	return nil
}

// env is what the agent and the guards get in their environment beyond
// the runner's own variables.
func (it *iterationRun) env(dir string) []string {
	env := []string{DirEnv + "=" + dir}
	if it.room != nil {
		env = append(env, "TMPDIR="+it.tmp)
	}
	return env
}

// judged is what the agent and the guards may not change: the config's
// verify.protect paths in the worktree.
func (it *iterationRun) judged() verify.Judged {
	globs, _ := verify.ParseGlobs(it.cfg.Verify.Protect)
	return verify.Judged{Root: it.work, Protect: globs}
}

// guards are the config's guards and the task's checks in the
// iteration's worktree, against the checkpoint's baseline.
func (it *iterationRun) guards(dir string) iteration.Guards {
	in := it.in
	env := append([]string{"RUNNER_ITERATION=" + strconv.Itoa(in.Iteration), "RUNNER_NODE_ID=" + in.Node}, it.env(dir)...)
	g := iteration.Guards{Work: it.work, Guards: it.cfg.Guards, Grace: it.cfg.Executor.KillGrace.Duration, Env: env, Baseline: in.Baseline, Removes: in.Removes, Room: it.room}
	for _, c := range in.Checks {
		g.Checks = append(g.Checks, iteration.CheckOf(c))
	}
	judged := it.judged()
	g.Judged, g.TamperDir, g.TamperPrefix = &judged, filepath.Join(it.runDir, "tamper"), "tamper/"
	return g
}

// pushWork takes the worktree as a commit of the checkpoint and pushes
// it to the result ref, which must not exist yet: a second push of the
// same iteration cannot swap its result.
func (w *Worker) pushWork(ctx context.Context, it *iterationRun) (string, error) {
	commit, err := w.commitWork(ctx, it.wt, it.in, "the work")
	if errors.Is(err, git.ErrNoChange) {
		commit, err = it.in.Checkpoint, nil // the work changed nothing: it is the checkpoint
	}
	if err != nil {
		return "", err
	}
	if err := it.wt.Push(ctx, it.in.Remote, commit+":"+it.in.ResultRef); err != nil {
		return "", err
	}
	return commit, nil
}

// commitWork takes the worktree wt of iteration in as one commit of its
// checkpoint; git.ErrNoChange when it holds nothing else.
func (w *Worker) commitWork(ctx context.Context, wt *git.Repo, in Input, what string) (string, error) {
	snap, err := wt.Snapshot(ctx, in.Checkpoint, nil)
	if err != nil {
		return "", fmt.Errorf("take the work as a tree: %w", err)
	}
	return wt.Commit(ctx, snap.Tree, in.Checkpoint, git.Message{
		Subject: fmt.Sprintf("runner: %s of iteration %d on %s", what, in.Iteration, in.Node),
		Body:    "Worked on by " + w.Name + ".",
	})
}

// tidy removes the iteration's worktree, run folder and temporary
// directory.
func (w *Worker) tidy(id string, it *iterationRun) {
	if it.work == "" {
		return
	}
	w.gitMu.Lock()
	if err := w.repo.RemoveWorktree(context.Background(), it.work, true); err != nil {
		_ = os.RemoveAll(it.work)
		_ = w.repo.PruneWorktrees(context.Background())
	}
	w.gitMu.Unlock()
	_ = os.RemoveAll(it.runDir)
	_ = os.RemoveAll(it.tmp)
	_ = os.Remove(w.underwayFile(filepath.Base(it.work)))
}

// forget deletes the checkpoint ref it fetched, once it is done: the
// worker's repository keeps no ref of an iteration that ended, and git
// may let go of what only that iteration used.
func (w *Worker) forget(it *iterationRun) {
	w.gitMu.Lock()
	defer w.gitMu.Unlock()
	_ = w.repo.DeleteRef(context.Background(), it.in.CheckpointRef, "")
}

// executorNamed is the executor of cfg's chain labelled name.
func executorNamed(cfg *config.Config, name string) (config.Executor, bool) {
	for _, e := range cfg.Chain() {
		if e.Label() == name {
			return e, true
		}
	}
	return config.Executor{}, false
}

// safeName is a workflow id as a file name.
func safeName(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, id)
}
