package loop

import (
	"context"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/review"
	"github.com/runner-cli/runner/internal/runbranch"
	"github.com/runner-cli/runner/internal/scrub"
	"github.com/runner-cli/runner/internal/spend"
	"github.com/runner-cli/runner/internal/state"
)

// After the guards (SPEC §14, §17): the review, when [review] wants one
// (package review), and for a slot's task that is done, its integration
// onto the run branch (package runbranch), before the outcome is
// recorded.

// afterGuards carries on an iteration whose guards are done: the review,
// when it waits for one, then the record. A runner resuming an iteration
// left in phase guards_done, reviewing or reviewed comes in here. An
// interruption during the review leaves the iteration in flight (nil).
func (r *Runner) afterGuards(ctx context.Context, l lane.Lane, meta *state.Meta) error {
	if review.Wanted(r.cfg, meta) {
		if err := r.reviewer(l).Ask(ctx, meta); err != nil || ctx.Err() != nil {
			return err
		}
	}
	if err := review.NoteRejection(r.cfg, r.p.RunDir(meta.Iteration), meta); err != nil {
		return err
	}
	if l.Here().Slot() > 0 && outcomeOf(meta) == state.OutcomeDone {
		if err := r.integrate(ctx, l, meta, r.titleOf(meta.Node)); err != nil || ctx.Err() != nil {
			return err // interrupted: the guards run again on resume
		}
	}
	return r.record(ctx, l, meta)
}

// integrate brings the finished task of lane l's slot onto the run
// branch (runbranch.Tree.Integrate), the guards run on the result in the
// slot when the run branch moved meanwhile; a task that could not land
// is journaled as a conflict.
func (r *Runner) integrate(ctx context.Context, l lane.Lane, meta *state.Meta, title string) error {
	here := l.Here()
	guards := func(ctx context.Context, dir, head string) (bool, error) {
		j, err := here.Guards(ctx, meta, dir, head, r.judged(l, meta))
		return j.Verdict == state.GuardPass, err
	}
	if err := here.Tree().Integrate(ctx, r.cfg, meta, title, here.Out(), guards, r.env.Lock.Outside); err != nil || meta.Conflict == nil {
		return err
	}
	c := meta.Conflict
	return r.ledger.Journal(state.Record{Iteration: meta.Iteration, Node: meta.Node, Slot: meta.Slot, Event: state.EventConflict,
		Paths: c.Files, Summary: runbranch.ConflictWhat(c)})
}

// reviewer is the review of an iteration in lane l (package review).
func (r *Runner) reviewer(l lane.Lane) *review.Review {
	return &review.Review{
		Config: func() *config.Config { return r.cfg }, Paths: r.p, Here: l.Here(), Branch: r.env.Branch,
		Ledger: r.ledger, Log: r.log, Options: r.optionsFor, Task: r.task, Clock: rateLimitClock,
		Scrubber: func() (*scrub.Scrubber, error) { return r.scrubberFor(r.cfg) },
		After: func(n int, dir, prefix string) ([]state.TamperMeta, error) {
			r.stopEscapedAgent(n)
			return r.forgedRunState(l, dir, prefix)
		},
		Spend: func(meta *state.Meta) (*spend.Allowance, func()) {
			a := r.allowance(r.capsNow(meta.Node), meta.Node, nil)
			live := r.meter.Begin(a)
			return a, live.End
		},
	}
}
