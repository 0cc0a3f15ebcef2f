package remote

import (
	"context"
	"fmt"

	"github.com/runner-cli/runner/internal/engine"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/state"
)

// Adopt resolves an iteration a previous coordinator left in flight by
// asking Temporal: one that finished is recorded (once: the ledger's
// marker is still there), one still running on a worker is adopted and
// awaited, one that ended without a result is interrupted. found is
// false when Temporal knows no workflow of the iteration: it was never
// submitted, and no agent ran.
func (l *Lane) Adopt(ctx context.Context, in *state.InFlight, meta *state.Meta) (res lane.Result, found bool, err error) {
	e := l.e
	id, retry := "", -1
	for k := 0; ; k++ {
		s, err := engine.Describe(ctx, e.c, engine.WorkflowID(e.run, in.Iteration, k))
		if err != nil {
			return res, true, fmt.Errorf("resume iteration %d: ask Temporal: %w", in.Iteration, err)
		}
		if !s.Found {
			break
		}
		id, retry = engine.WorkflowID(e.run, in.Iteration, k), k
		if s.Running {
			who := s.Worker
			if who == "" {
				who = "no worker yet"
			}
			fmt.Fprintf(e.notices, "runner: iteration %d (%s) still runs (%s): waiting for it\n", in.Iteration, inert.Line(in.Node), inert.Line(who))
		}
	}
	if id == "" {
		return res, false, nil
	}
	if meta.Worker == "" {
		meta.Worker = in.Worker // as the previous runner learned it
	}
	var out *engine.Output
	queue := e.env.Config().Engine.TaskQueue
	l.Lock().Outside(func() { out, err = l.await(ctx, id, queue, meta, in.Node, meta.Attempt) })
	switch {
	case err != nil && ctx.Err() == nil && !engine.Lost(err):
		return res, true, err
	case err != nil:
		l.noteLost(ctx, meta, err, retry)
		return l.lost(ctx, meta, false), true, nil
	case out.StartErr != "":
		return lane.Result{Ended: "the agent could not be started on worker " + out.Worker + ": " + out.StartErr + "; no attempt was spent"}, true, nil
	}
	agent, tamper, err := l.take(ctx, meta, out, retry)
	if err != nil {
		return res, true, err
	}
	res = lane.Result{Agent: agent, Tamper: tamper}
	if agent.Class == executor.ClassRateLimited {
		res.Ended = "the agent hit a usage or rate limit on worker " + out.Worker + ": no attempt was spent"
	}
	return res, true, nil
}

// CancelOrphans cancels the run's workflows still running once every
// iteration a previous runner left in flight is resolved: no iteration
// expects them (a state folder restored from a copy, a submission whose
// record was lost), and nothing is to keep working on a worker for them.
func (e *Engine) CancelOrphans(ctx context.Context) {
	ids, err := engine.Running(ctx, e.c, e.run)
	if err != nil {
		e.env.Log.Warn("could not list the run's workflows to cancel those no iteration expects", "err", err)
		return
	}
	for _, id := range ids {
		if err := engine.RequestCancel(ctx, e.c, id); err != nil {
			e.env.Log.Warn("could not cancel a workflow no iteration expects", "workflow", id, "err", err)
			continue
		}
		fmt.Fprintf(e.notices, "runner: cancelled the workflow %s: no iteration of this run expects it\n", inert.Line(id))
	}
}
