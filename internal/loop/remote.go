package loop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/runner-cli/runner/internal/engine"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/preflight"
	"github.com/runner-cli/runner/internal/state"
)

// Iterations on workers (SPEC §22). With [engine], this runner is the
// coordinator: it begins each iteration as it does for a local slot (the
// ledger's started phase, the context files, the scrubbed prompt), and
// where a slot would run the agent and the guards, it pushes the
// checkpoint to the shared remote and submits the iteration's workflow;
// a worker runs them and sends back the work as a commit and the guards'
// results. The work is put in the slot's worktree, and from there the
// iteration goes on as a local one: its judged tree, the review, the
// record, the integration with the guards run again on the integrated
// result, the run branch.

// remote is the run's engine: its client, the run's id, and the key it
// signs the inputs and verifies the outputs with (nil: none).
type remote struct {
	c   client.Client
	run string
	key engine.Key
	// setupFailures counts the iterations in a row whose worker failed
	// before their agent started (workersFailing).
	setupFailures int
}

// openEngine connects to the Temporal service of [engine], when set.
func (r *Runner) openEngine(ctx context.Context) error {
	e := r.cfg.Engine
	if !e.On() {
		return nil
	}
	if r.branch.Main() == nil {
		return fmt.Errorf("[engine] needs git checkpoints: the workers fetch the checkpoint from engine.remote and push their work there; run in a git repository with a commit and git.checkpoint = true")
	}
	run, err := r.runID()
	if err != nil {
		return err
	}
	key, err := r.engineKey()
	if err != nil {
		return fmt.Errorf("%s [engine] key_file: %w", r.p.Rel(r.p.Config()), err)
	}
	if err := r.branch.Main().Repo().Reach(ctx, e.Remote, engine.RunRefs(run)); err != nil {
		return fmt.Errorf("%s [engine] remote = %q: %w; give a URL or a path that this machine and every worker can reach "+
			"(a bare repository on a shared disk counts: git init --bare PATH)", r.p.Rel(r.p.Config()), e.Remote, err)
	}
	host, _ := os.Hostname()
	c, err := engine.Dial(ctx, e, fmt.Sprintf("runner run %s:%d", host, os.Getpid()))
	if err != nil {
		return fmt.Errorf("%s [engine]: %w", r.p.Rel(r.p.Config()), err)
	}
	r.engine = &remote{c: c, run: run, key: key}
	fmt.Fprintf(r.opts.Notices, "runner: iterations run on the workers of task queue %s at %s (run %s)\n", inert.Line(e.TaskQueue), inert.Line(e.Address), run)
	return nil
}

// closeEngine closes the engine's client.
func (r *Runner) closeEngine() {
	if r.engine != nil {
		r.engine.c.Close()
	}
}

// runID is the run's id, made once and kept in the state folder: a new
// ledger is a new run, whose iteration numbers start again.
func (r *Runner) runID() (string, error) {
	have, err := state.LoadEngine(r.p)
	if err == nil && have.Run != "" {
		return have.Run, nil
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	have = state.Engine{Run: hex.EncodeToString(b[:])}
	if err := state.SaveEngine(r.p, have); err != nil {
		return "", err
	}
	return have.Run, nil
}

// remoteWork is work for an iteration run on a worker.
func (r *worker) remoteWork(ctx context.Context, it *underway) error {
	r.probeChecks(ctx, it.node, it.meta)
	meta := it.meta
	var waited time.Duration
	// start is what the agent run starts from: the checkpoint, then what
	// the runs before it left (an agent stopped by a rate limit goes on
	// with its own work, as in a local slot's worktree).
	start := r.ck.Head()
	for retry := 0; ; retry++ {
		noted := it.link.noted
		out, err := r.onWorker(ctx, it, retry, start)
		if err != nil {
			return err
		}
		if out == nil && meta.Worker == "" && ctx.Err() != nil {
			// Interrupted before any worker took it: nothing was tried.
			r.iterationEnded(meta.Iteration)
			why := "the run was interrupted before a worker took the iteration"
			if err := r.ledger.SetAside(meta, why+"; no attempt was spent", errors.New(why)); err != nil {
				return err
			}
			return errNoIteration
		}
		if out == nil {
			// Interrupted, or its worker was lost: no result.
			if err := r.remoteLost(ctx, meta, ctx.Err()); err != nil {
				return err
			}
			return r.workersFailing(meta)
		}
		if out.StartErr != "" {
			// This worker cannot start the agent (its CLI is not installed
			// there): the worker's failure, not the task's.
			meta.Worker, meta.NoAttempt = out.Worker, true
			meta.Note = strings.TrimSpace(meta.Note + " the agent could not be started on worker " + out.Worker + ": " + firstLine(out.StartErr))
			if err := r.remoteLost(ctx, meta, ctx.Err()); err != nil {
				return err
			}
			return r.workersFailing(meta)
		}
		r.engine.setupFailures = 0
		res, err := r.takeRemote(ctx, meta, out, retry)
		if err != nil {
			return err
		}
		executor.NoteRun(meta, res)
		if res.Class != executor.ClassRateLimited || ctx.Err() != nil || len(meta.Tamper) > 0 {
			it.link.ran(noted)
			r.ledger.AddUsage(meta.Executor, meta.Usage)
			return r.agentFinished(ctx, meta, res)
		}
		if out.Result != "" {
			start = out.Result
		}
		if done, err := r.waitOutRateLimit(ctx, it, res, &waited); done {
			return err
		}
	}
}

// onWorker runs iteration it's agent run retry on a worker, from the
// commit start, and returns what it sent back; nil when the run was
// interrupted or the worker was lost (meta.Note says which).
func (r *worker) onWorker(ctx context.Context, it *underway, retry int, start string) (*engine.Output, error) {
	in, err := r.engineInput(it, retry, start)
	if err != nil {
		return nil, r.failedBeforeAgent(it.meta, err)
	}
	var out *engine.Output
	var werr error
	queue := r.cfg.Engine.TaskQueue // read under the run's lock
	r.outside(func() {
		err := r.retryRemote(ctx, func() error { return r.ck.Repo().Push(ctx, in.Remote, "+"+in.Checkpoint+":"+in.CheckpointRef) })
		if err != nil {
			werr = fmt.Errorf("%s [engine] remote: %w", r.p.Rel(r.p.Config()), err)
			return
		}
		run, err := engine.Submit(ctx, r.engine.c, queue, r.engine.key, in)
		if err != nil {
			werr = err
			return
		}
		out, werr = r.awaitWorker(ctx, run.GetID(), queue, it.meta, it.node.ID, it.meta.Attempt)
	})
	if werr != nil && ctx.Err() == nil && !engine.Lost(werr) {
		return nil, r.failedBeforeAgent(it.meta, werr)
	}
	if werr != nil {
		r.noteLost(ctx, it.meta, werr, retry)
	}
	return out, nil
}

// engineInput is what iteration it's worker is given for its agent run
// retry, which starts from the commit start.
func (r *worker) engineInput(it *underway, retry int, start string) (engine.Input, error) {
	cfgText, err := os.ReadFile(r.p.Config())
	if err != nil {
		return engine.Input{}, err
	}
	if cfgText, err = engine.ConfigForWorkers(cfgText); err != nil {
		return engine.Input{}, fmt.Errorf("%s: %w", r.p.Rel(r.p.Config()), err)
	}
	schema, err := os.ReadFile(r.p.Schema())
	if err != nil {
		return engine.Input{}, err
	}
	run, n := r.engine.run, it.n
	timeout := r.cfg.Executor.Timeout.Duration + r.cfg.Git.SetupTimeout.Duration + 10*time.Minute
	for _, g := range r.cfg.Guards {
		timeout += g.Timeout.Duration
	}
	for _, c := range it.meta.CheckSpecs {
		timeout += iteration.CheckOf(c).Guard.Timeout.Duration
	}
	return engine.Input{
		Run: run, Iteration: n, Retry: retry, Node: it.node.ID, Attempt: it.meta.Attempt,
		Remote: r.cfg.Engine.Remote, Checkpoint: start,
		CheckpointRef: engine.CheckpointRef(run, n, retry), ResultRef: engine.ResultRef(run, n, retry),
		Config: cfgText, Executor: it.link.name(), Prompt: it.req.Prompt, Schema: schema,
		Checks: it.meta.CheckSpecs, Baseline: r.baselines.Of(r.cfg.Guards, r.ck.BaselineKey()), Removes: it.meta.Removes,
		Timeout: timeout, Heartbeat: r.cfg.Engine.Heartbeat.Duration,
	}, nil
}

// takeRemote brings what a worker sent back into the lane: the run
// folder's files, the work (fetched from the remote and put in the
// working tree, HEAD still at the checkpoint), what changed of the
// protected paths (compared by git with the checkpoint, whatever the
// worker says), and the guards' judgement for runGuards.
func (r *worker) takeRemote(ctx context.Context, meta *state.Meta, out *engine.Output, retry int) (*executor.Result, error) {
	meta.Worker = out.Worker
	if out.Unconfined != "" {
		meta.Unconfined = "on worker " + out.Worker + ": " + out.Unconfined
	} else {
		meta.Unconfined = ""
	}
	if err := writeRemoteFiles(r.p.RunDir(meta.Iteration), out.Files); err != nil {
		return nil, err
	}
	if out.Agent == nil {
		return nil, fmt.Errorf("iteration %d: worker %s sent no result of the agent", meta.Iteration, out.Worker)
	}
	var err error
	remote := r.cfg.Engine.Remote // read under the run's lock
	r.outside(func() { err = r.takeWork(ctx, remote, meta.Iteration, retry, out.Result) })
	if err != nil {
		return nil, err
	}
	tamper, err := r.ck.ProtectedSince(ctx, r.cfg.Verify.Protect, meta.Iteration)
	if err != nil {
		return nil, err
	}
	if j := out.Judgement; j != nil {
		tamper = append(tamper, j.Tamper...)
		j.Tamper = nil
		r.remoteJudgement = j
	}
	if err := r.noteTamper(meta, tamper); err != nil {
		return nil, err
	}
	r.remoteJudged = true
	return out.Agent, nil
}

// takeWork fetches a worker's work, commit, and puts its tree in the
// lane's working tree, HEAD left at the checkpoint it is a commit of.
func (r *worker) takeWork(ctx context.Context, remote string, n, retry int, commit string) error {
	ck := r.ck
	repo := ck.Repo()
	ref := engine.ResultRef(r.engine.run, n, retry)
	if err := r.retryRemote(ctx, func() error { return repo.Fetch(ctx, remote, "+"+ref+":"+ref) }); err != nil {
		return fmt.Errorf("%s [engine] remote: %w", r.p.Rel(r.p.Config()), err)
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

// workerGuards is runGuards for an iteration a worker judged.
func (r *worker) workerGuards(meta *state.Meta, key string) ([]state.GuardMeta, string, error) {
	j := r.remoteJudgement
	if j == nil {
		return []state.GuardMeta{{Name: "worker", ExitCode: 1, Status: state.GuardFail, Error: "the worker ran no guards on work its agent said was done"}}, state.GuardFail, nil
	}
	meta.Checks = j.Checks
	if j.Judged {
		meta.Baseline = key
	}
	r.noteUnreadReports(*j)
	return j.Results, j.Verdict, preflight.SaveFound(r.p.RunDir(meta.Iteration), j.Found)
}

// remoteRetries are the waits between tries of a push to engine.remote
// or a fetch from it: a remote across a network may be away for a
// moment, which must not end the night.
var remoteRetries = []time.Duration{2 * time.Second, 8 * time.Second, 30 * time.Second}

// retryRemote runs call, and again after each of remoteRetries while it
// fails and ctx lives; the last error is returned.
func (r *worker) retryRemote(ctx context.Context, call func() error) error {
	err := call()
	for _, wait := range remoteRetries {
		if err == nil || ctx.Err() != nil {
			return err
		}
		r.log.Warn("the git remote did not answer; trying again", "in", wait, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		err = call()
	}
	return err
}
