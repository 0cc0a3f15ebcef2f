package loop

import (
	"context"
	"fmt"

	"github.com/runner-cli/runner/internal/engine"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
)

// resumeOnWorker resolves an iteration a previous coordinator left in
// flight by asking Temporal: one that finished is recorded (once: the
// ledger's marker is still there), one still running on a worker is
// adopted and awaited, one that ended without a result is interrupted.
// found is false when Temporal knows no workflow of the iteration: it
// was never submitted, and no agent ran.
func (r *worker) resumeOnWorker(ctx context.Context, in *state.InFlight, meta *state.Meta) (found bool, err error) {
	id, retry := "", -1
	for k := 0; ; k++ {
		s, err := engine.Describe(ctx, r.engine.c, engine.WorkflowID(r.engine.run, in.Iteration, k))
		if err != nil {
			return true, fmt.Errorf("resume iteration %d: ask Temporal: %w", in.Iteration, err)
		}
		if !s.Found {
			break
		}
		id, retry = engine.WorkflowID(r.engine.run, in.Iteration, k), k
		if s.Running {
			who := s.Worker
			if who == "" {
				who = "no worker yet"
			}
			fmt.Fprintf(r.opts.Notices, "runner: iteration %d (%s) still runs (%s): waiting for it\n", in.Iteration, inert.Line(in.Node), inert.Line(who))
		}
	}
	if id == "" {
		return false, nil
	}
	if meta.Worker == "" {
		meta.Worker = in.Worker // as the previous runner learned it
	}
	var out *engine.Output
	queue := r.cfg.Engine.TaskQueue
	r.outside(func() { out, err = r.awaitWorker(ctx, id, queue, meta, in.Node, meta.Attempt) })
	switch {
	case err != nil && ctx.Err() == nil && !engine.Lost(err):
		return true, err
	case err != nil:
		r.noteLost(ctx, meta, err, retry)
		return true, r.remoteLost(ctx, meta, ctx.Err())
	case out.StartErr != "":
		return true, r.ledger.EndResumed(meta, "the agent could not be started on worker "+out.Worker+": "+out.StartErr+"; no attempt was spent")
	}
	res, err := r.takeRemote(ctx, meta, out, retry)
	if err != nil {
		return true, err
	}
	executor.NoteRun(meta, res)
	r.ledger.AddUsage(meta.Executor, meta.Usage)
	if res.Class == executor.ClassRateLimited {
		return true, r.ledger.EndResumed(meta, "the agent hit a usage or rate limit on worker "+out.Worker+": no attempt was spent")
	}
	r.log.Info("recording an iteration a worker finished for a previous runner", "iteration", in.Iteration, "node", in.Node, "worker", out.Worker)
	return true, r.agentFinished(ctx, meta, res)
}

// cancelOrphans cancels the run's workflows still running once every
// iteration a previous runner left in flight is resolved: no iteration
// expects them (a state folder restored from a copy, a submission whose
// record was lost), and nothing is to keep working on a worker for them.
func (r *Runner) cancelOrphans(ctx context.Context) {
	if r.engine == nil || len(r.ledger.State().Flights()) > 0 {
		return
	}
	ids, err := engine.Running(ctx, r.engine.c, r.engine.run)
	if err != nil {
		r.log.Warn("could not list the run's workflows to cancel those no iteration expects", "err", err)
		return
	}
	for _, id := range ids {
		if err := engine.RequestCancel(ctx, r.engine.c, id); err != nil {
			r.log.Warn("could not cancel a workflow no iteration expects", "workflow", id, "err", err)
			continue
		}
		fmt.Fprintf(r.opts.Notices, "runner: cancelled the workflow %s: no iteration of this run expects it\n", inert.Line(id))
	}
}
