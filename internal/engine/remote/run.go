package remote

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/engine"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/preflight"
	"github.com/runner-cli/runner/internal/state"
)

// Run runs the iteration's agent on a worker, from the commit the lane
// starts from, and takes what it sent back into the slot.
func (l *Lane) Run(ctx context.Context, s lane.Spec) (lane.Result, error) {
	meta, retry := s.Meta, s.Request.Retry
	out, notRun := l.onWorker(ctx, s, retry)
	switch {
	case notRun != nil:
		return lane.Result{NotRun: notRun}, nil
	case out == nil && meta.Worker == "" && ctx.Err() != nil:
		// Interrupted before any worker took it: nothing was tried.
		return lane.Result{Aside: "the run was interrupted before a worker took the iteration"}, nil
	case out == nil:
		// Interrupted, or its worker was lost: no result.
		return l.lost(ctx, meta, true), nil
	case out.StartErr != "":
		// This worker cannot start the agent (its CLI is not installed
		// there): the worker's failure, not the task's.
		meta.Worker, meta.NoAttempt = out.Worker, true
		meta.Note = strings.TrimSpace(meta.Note + " the agent could not be started on worker " + out.Worker + ": " + firstLine(out.StartErr))
		return l.lost(ctx, meta, true), nil
	}
	l.e.setupFailures = 0
	agent, tamper, err := l.take(ctx, meta, out, retry)
	if err != nil {
		return lane.Result{}, err
	}
	if out.Result != "" {
		l.start = out.Result
	}
	return lane.Result{Agent: agent, Tamper: tamper}, nil
}

// onWorker runs the iteration's agent run retry on a worker, from the
// lane's start, and returns what it sent back; nil when the run was
// interrupted or the worker was lost (meta.Note says which). notRun is
// a failure before any agent ran.
func (l *Lane) onWorker(ctx context.Context, s lane.Spec, retry int) (out *engine.Output, notRun error) {
	e := l.e
	in, err := l.input(s, retry)
	if err != nil {
		return nil, err
	}
	var werr error
	cfg := e.env.Config()
	queue := cfg.Engine.TaskQueue // read under the run's lock
	l.Lock().Outside(func() {
		err := e.retryRemote(ctx, func() error { return l.Tree().Repo().Push(ctx, in.Remote, "+"+in.Checkpoint+":"+in.CheckpointRef) })
		if err != nil {
			werr = fmt.Errorf("%s [engine] remote: %w", e.env.Paths.Rel(e.env.Paths.Config()), err)
			return
		}
		run, err := engine.Submit(ctx, e.c, queue, e.key, in)
		if err != nil {
			werr = err
			return
		}
		out, werr = l.await(ctx, run.GetID(), queue, s.Meta, s.Meta.Node, s.Meta.Attempt)
	})
	if werr != nil && ctx.Err() == nil && !engine.Lost(werr) {
		return nil, werr
	}
	if werr != nil {
		l.noteLost(ctx, s.Meta, werr, retry)
	}
	return out, nil
}

// input is what the iteration's worker is given for its agent run retry,
// which starts from the lane's start.
func (l *Lane) input(s lane.Spec, retry int) (engine.Input, error) {
	e, meta := l.e, s.Meta
	cfg, p := e.env.Config(), e.env.Paths
	cfgText, err := os.ReadFile(p.Config())
	if err != nil {
		return engine.Input{}, err
	}
	if cfgText, err = engine.ConfigForWorkers(cfgText); err != nil {
		return engine.Input{}, fmt.Errorf("%s: %w", p.Rel(p.Config()), err)
	}
	schema, err := os.ReadFile(p.Schema())
	if err != nil {
		return engine.Input{}, err
	}
	run, n := e.run, meta.Iteration
	timeout := cfg.Executor.Timeout.Duration + cfg.Git.SetupTimeout.Duration + 10*time.Minute
	for _, g := range cfg.Guards {
		timeout += g.Timeout.Duration
	}
	for _, c := range meta.CheckSpecs {
		timeout += iteration.CheckOf(c).Guard.Timeout.Duration
	}
	return engine.Input{
		Run: run, Iteration: n, Retry: retry, Node: meta.Node, Attempt: meta.Attempt,
		Remote: cfg.Engine.Remote, Checkpoint: l.start,
		CheckpointRef: engine.CheckpointRef(run, n, retry), ResultRef: engine.ResultRef(run, n, retry),
		Config: cfgText, Executor: s.Name, Prompt: s.Request.Prompt, Schema: schema, Allowance: s.Executor.Allowance.Static(),
		Checks: meta.CheckSpecs, Baseline: e.env.Baseline(cfg.Guards, l.Tree().BaselineKey()), Removes: meta.Removes,
		Timeout: timeout, Heartbeat: cfg.Engine.Heartbeat.Duration,
	}, nil
}

// take brings what a worker sent back into the slot: the run folder's
// files, the work (fetched from the remote and put in the working tree,
// HEAD still at the checkpoint), and the guards' judgement for Judge;
// it returns the agent's result and what changed of the protected paths
// (compared by git with the checkpoint, whatever the worker says), for
// the coordinator to note.
func (l *Lane) take(ctx context.Context, meta *state.Meta, out *engine.Output, retry int) (*executor.Result, []state.TamperMeta, error) {
	meta.Worker = out.Worker
	if out.Unconfined != "" {
		meta.Unconfined = "on worker " + out.Worker + ": " + out.Unconfined
	} else {
		meta.Unconfined = ""
	}
	// What the agent's room left open is the worker's room's.
	meta.Openings = nil
	for _, o := range out.Openings {
		meta.Openings = append(meta.Openings, "on worker "+out.Worker+": "+o)
	}
	if err := writeRemoteFiles(l.e.env.Paths.RunDir(meta.Iteration), out.Files); err != nil {
		return nil, nil, err
	}
	if out.Agent == nil {
		return nil, nil, fmt.Errorf("iteration %d: worker %s sent no result of the agent", meta.Iteration, out.Worker)
	}
	var err error
	cfg := l.e.env.Config()
	remote := cfg.Engine.Remote // read under the run's lock
	l.Lock().Outside(func() { err = l.takeWork(ctx, remote, meta.Iteration, retry, out.Result) })
	if err != nil {
		return nil, nil, err
	}
	tamper, err := l.Tree().ProtectedSince(ctx, cfg.Verify.Protect, meta.Iteration)
	if err != nil {
		return nil, nil, err
	}
	if j := out.Judgement; j != nil {
		tamper = append(tamper, j.Tamper...)
		j.Tamper = nil
		l.judgement = j
	}
	l.took = true
	return out.Agent, tamper, nil
}

// takeWork fetches a worker's work, commit, and puts its tree in the
// slot's working tree, HEAD left at the checkpoint it is a commit of.
func (l *Lane) takeWork(ctx context.Context, remote string, n, retry int, commit string) error {
	e, ck := l.e, l.Tree()
	repo := ck.Repo()
	ref := engine.ResultRef(e.run, n, retry)
	if err := e.retryRemote(ctx, func() error { return repo.Fetch(ctx, remote, "+"+ref+":"+ref) }); err != nil {
		return fmt.Errorf("%s [engine] remote: %w", e.env.Paths.Rel(e.env.Paths.Config()), err)
	}
	got, err := repo.RefValue(ctx, ref)
	if err != nil {
		return err
	}
	if got != commit {
		return fmt.Errorf("iteration %d: the worker's work %s is not the commit it said, %s", n, got, commit)
	}
	// The files and the index as the commit has them; HEAD stays.
	return repo.ResetWorktree(ctx, commit, ck.Runtime())
}

// writeRemoteFiles writes the run folder's files a worker sent into
// dir; a name that would leave dir is skipped.
func writeRemoteFiles(dir string, files map[string][]byte) error {
	for name, data := range files {
		clean := path.Clean(name)
		if clean == "." || path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") ||
			clean == "prompt.md" || clean == "meta.json" || clean == "context.json" {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(clean))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := fsutil.ReplaceFile(p, data, 0o644, fsutil.NotSynced); err != nil {
			return err
		}
	}
	return nil
}

// Judge takes the judgement of the worker that ran the agent; the guards
// run in the slot, as in a local lane, when no result of a worker was
// taken here (an iteration resumed after its agent was done).
func (l *Lane) Judge(ctx context.Context, meta *state.Meta, judged lane.Judged) ([]state.GuardMeta, string, error) {
	if !l.took {
		return l.Local.Judge(ctx, meta, judged)
	}
	j := l.judgement
	if j == nil {
		return []state.GuardMeta{{Name: "worker", ExitCode: 1, Status: state.GuardFail, Error: "the worker ran no guards on work its agent said was done"}}, state.GuardFail, nil
	}
	meta.Checks = j.Checks
	if j.Judged {
		meta.Baseline = l.Tree().BaselineKey()
	}
	if err := judged(j); err != nil {
		return nil, "", err
	}
	return j.Results, j.Verdict, preflight.SaveFound(l.e.env.Paths.RunDir(meta.Iteration), j.Found)
}

// firstLine is the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimPrefix(line, "- ")
}
