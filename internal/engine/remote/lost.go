package remote

import (
	"context"
	"fmt"
	"strings"

	"github.com/runner-cli/runner/internal/engine"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/state"
)

// An iteration on a worker that ends without a result: its worker
// stopped answering, failed, or could not start the agent, or the run
// was interrupted.

// noteLost notes in meta why its agent run retry on a worker ended
// without a result (err): whether an attempt was spent, why, which worker
// had it; and keeps the work that worker pushed, if any.
func (l *Lane) noteLost(ctx context.Context, meta *state.Meta, err error, retry int) {
	meta.NoAttempt = ctx.Err() == nil && (engine.BeforeAgent(err) || engine.Unverified(err))
	meta.Note = strings.TrimSpace(meta.Note + " " + l.lostWhy(ctx, err, meta.Iteration, retry))
	if meta.Worker == "" {
		meta.Worker = engine.WorkerOf(err)
	}
	if engine.Unverified(err) {
		l.e.noteRefused(meta, err)
		return // nothing of what came back is believed, the work it names included
	}
	if ctx.Err() == nil && !engine.BeforeAgent(err) {
		l.keepPushedWork(ctx, meta, retry)
	}
}

// noteRefused notes a result that could not be verified: in meta, the
// journal (EventRefused), a notice and the log. It runs under the run's
// lock.
func (e *Engine) noteRefused(meta *state.Meta, err error) {
	meta.Refused = firstLine(engine.Why(err))
	e.env.Log.Warn("refused a worker's result that could not be verified with the engine key", "iteration", meta.Iteration, "node", meta.Node, "err", err)
	fmt.Fprintf(e.notices, "runner: iteration %d: %s; the iteration is lost, and costs the task no attempt\n", meta.Iteration, inert.Line(meta.Refused))
	if jerr := e.hooks.Journal(state.Record{Iteration: meta.Iteration, Node: meta.Node, Event: state.EventRefused, Error: meta.Refused}); jerr != nil {
		e.env.Log.Warn("could not journal the refused result", "iteration", meta.Iteration, "err", jerr)
	}
}

// lostWhy says why iteration n's agent run retry on a worker ended
// without a result, and where the work of a worker that stopped
// answering is kept.
func (l *Lane) lostWhy(ctx context.Context, err error, n, retry int) string {
	remote := l.e.env.Config().Engine.Remote
	if ctx.Err() != nil {
		return fmt.Sprintf("the run was interrupted while the iteration ran on a worker; it was cancelled there, and what the agent had written, if anything, was pushed to %s on %s",
			engine.LeftoverRef(l.e.run, n, retry), remote)
	}
	why := "iteration on a worker: " + firstLine(engine.Why(err))
	leftover := engine.LeftoverRef(l.e.run, n, retry)
	switch {
	case engine.Unverified(err):
		why += ". Nothing it said is believed: the task is tried again"
	case engine.Unanswered(err):
		why += fmt.Sprintf(". Started again in its --dir, the worker pushes what the agent had written to %s on %s", leftover, remote)
	case !engine.BeforeAgent(err):
		why += fmt.Sprintf(". What the agent had written, if anything, was pushed to %s on %s", leftover, remote)
	}
	return why
}

// lost is how an iteration whose worker sent nothing back ends: recorded
// as interrupted, an attempt (none when meta.NoAttempt: its worker failed
// before the agent started), and the task is tried again on any worker;
// with failing, the run stops when the workers keep failing.
func (l *Lane) lost(ctx context.Context, meta *state.Meta, failing bool) lane.Result {
	why := "its worker stopped before it finished"
	switch {
	case ctx.Err() != nil:
		why = "the run was interrupted while the iteration ran on a worker"
	case meta.Refused != "":
		why = "what came back from its worker could not be verified with the engine key"
	case meta.NoAttempt:
		why = "its worker failed before the agent started"
	}
	res := lane.Result{Lost: why}
	if failing {
		res.After = func() error { return l.e.failing(meta) }
	}
	return res
}

// failing counts the iterations in a row whose worker failed
// before their agent started, or could not start it (meta.NoAttempt),
// and stops the run when they reach loop.max_consecutive_errors: then
// the workers cannot work (the agent's program is not installed there,
// their git does not reach engine.remote, their disk is full), and the
// tasks would only go round them, without an attempt, all night.
func (e *Engine) failing(meta *state.Meta) error {
	if !meta.NoAttempt {
		return nil
	}
	e.setupFailures++
	cfg := e.env.Config()
	limit := cfg.Loop.MaxConsecutiveErrors
	if limit <= 0 || e.setupFailures < limit {
		return nil
	}
	if meta.Refused != "" {
		return fmt.Errorf("stopping: %d iterations in a row ended without an attempt (loop.max_consecutive_errors = %d); the last one (%d) brought back a result that could not be verified: %s. "+
			"Another program answers on task queue %s (an agent that reaches the Temporal service, or a worker with another key file): `runner doctor` challenges each worker's key. No task spent an attempt on this",
			e.setupFailures, limit, meta.Iteration, inert.Line(meta.Refused), inert.Line(cfg.Engine.TaskQueue))
	}
	return fmt.Errorf("stopping: %d iterations in a row failed on their workers before the agent started (loop.max_consecutive_errors = %d); "+
		"the last one (%d, on %s): %s. Look at the workers' output: is the agent's program installed there? Do they hold this run's engine key (`runner doctor` checks)? Does their git reach engine.remote (%s)? Is their --dir writable, with room? "+
		"No task spent an attempt on this", e.setupFailures, limit, meta.Iteration, inert.Line(meta.Worker), inert.Line(meta.Note), inert.Line(cfg.Engine.Remote))
}

// keepPushedWork brings the work the worker of iteration n's agent run
// retry pushed before it was lost or failed (it died running the guards,
// say) into
// the slot's working tree, where recording the iteration keeps it as the
// attempt's, and says so in meta's note; nothing when it pushed none.
func (l *Lane) keepPushedWork(ctx context.Context, meta *state.Meta, retry int) {
	remote, n := l.e.env.Config().Engine.Remote, meta.Iteration
	ref := engine.ResultRef(l.e.run, n, retry)
	kept := false
	l.Lock().Outside(func() {
		id, err := l.Tree().Repo().RemoteRef(ctx, remote, ref)
		if err != nil || id == "" {
			return
		}
		if err := l.takeWork(ctx, remote, n, retry, id); err != nil {
			l.e.env.Log.Warn("could not keep the work a lost worker had pushed", "iteration", n, "ref", ref, "err", err)
			return
		}
		kept = true
	})
	if kept {
		meta.Note += fmt.Sprintf(" Its worker had pushed its work (%s) before the end: it is kept as this attempt's.", ref)
	}
}
