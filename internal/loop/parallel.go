package loop

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/tree"
)

// parallelism is how many tasks may be worked on at once:
// `runner run --parallel N`, else loop.parallel.
func (r *Runner) parallelism() int {
	if r.opts.Parallel > 0 {
		return r.opts.Parallel
	}
	if r.cfg.Engine.On() {
		return r.cfg.Engine.Parallel
	}
	return max(r.cfg.Loop.Parallel, 1)
}

// openSlots prepares the run's slots when it works on several tasks at
// once, or when a previous runner left an iteration in flight in a slot
// (it is resumed there). It takes the run's lock, held from then on by
// the loop but while it waits for its slots (runSlots).
func (r *Runner) openSlots() error {
	want := (r.parallelism() > 1 || r.engine != nil) && !r.opts.Once
	left := false
	for _, f := range r.ledger.State().Flights() {
		left = left || f.Slot > 0
	}
	if !want && !left {
		return nil
	}
	if r.env.Branch.Main() == nil {
		if !want {
			return fmt.Errorf("an iteration was left in flight in a parallel slot, but git checkpoints are off now; turn git.checkpoint back on to resume it")
		}
		return fmt.Errorf("loop.parallel = %d needs git checkpoints (SPEC §12): each task works in a worktree of its own and lands on the run branch as a commit; "+
			"run in a git repository with a commit and git.checkpoint = true, or set loop.parallel = 1 in %s", r.parallelism(), r.p.Rel(r.p.Config()))
	}
	if err := r.env.Branch.Main().Repo().CheckIntegrate(); err != nil {
		return fmt.Errorf("loop.parallel = %d: %w", r.parallelism(), err)
	}
	if msg := cpuNotice(r.parallelism(), numCPU()); want && msg != "" && r.engine == nil {
		r.log.Warn(msg)
	}
	r.par = &parallel{slots: map[int]*slot{}}
	r.env.Lock.Take()
	return nil
}

// numCPU is the number of CPUs the runner may use.
var numCPU = runtime.NumCPU

// cpuNotice is the notice a run with n slots gets on a machine with cpus
// CPUs: "" while every slot has a CPU of its own. Agents, and the builds
// and tests they and the guards run, compete for the CPUs; past their
// number a night can be slower than with fewer slots.
func cpuNotice(n, cpus int) string {
	if n <= cpus {
		return ""
	}
	return fmt.Sprintf("loop.parallel = %d is above this machine's %d CPUs: the agents and the builds and tests they run compete for them, "+
		"and the night may be slower than with %d slots", n, cpus, cpus)
}

// leaveSlots ends the slots of a run that goes on one task at a time,
// once what a previous runner left in them is resolved.
func (r *Runner) leaveSlots() {
	if r.par == nil {
		return
	}
	r.env.Lock.Drop()
	r.par = nil
}

// slotDone is a slot's iteration ended, and how.
type slotDone struct {
	s   *slot
	err error
}

// runSlots is the loop with parallel slots (SPEC §14): at each boundary
// it starts an iteration in every free slot on the next selectable tasks
// (tree.SelectN), up to loop.parallel at once, then waits for one to end.
// Limits are shared: max_iterations counts every slot's iterations, the
// cost and token caps the total, and while every executor is limited no
// new task starts. `runner stop`, `runner pause`, the limits and an
// error end nothing that works: nothing new starts, and the run ends (or
// holds) once the slots at work are done. Ctrl-C interrupts every
// slot's agent, each iteration recorded as interrupted.
func (r *Runner) runSlots(ctx context.Context) (*Result, error) {
	done := make(chan slotDone, len(r.par.slots)+config.MaxParallel)
	running := 0
	var end *Result
	var failure error
	for {
		if running == 0 && (end != nil || failure != nil) {
			if err := r.tidySlots(ctx); err != nil && failure == nil {
				failure = err
			}
			if failure != nil {
				return r.failed(ctx, failure)
			}
			end.Iterations = r.count
			return end, nil
		}
		if end == nil && failure == nil {
			started, res, err := r.startSlots(ctx, running, done)
			running += started
			end, failure = res, err
			if running == 0 || (started > 0 && end == nil && failure == nil) {
				continue
			}
		}
		// Wait for a slot to end, without the lock: its iteration needs it.
		var d slotDone
		r.env.Lock.Outside(func() { d = <-done })
		running--
		d.s.busy = ""
		switch {
		case errors.Is(d.err, errNoIteration):
			r.count-- // set aside without an attempt: not an iteration
		case d.err != nil && failure == nil:
			failure = d.err
		}
	}
}

// startSlots starts the iterations the boundary allows: it returns how
// many, or the end of the run (nothing more starts; the run ends when the
// slots at work are done), or an error. Nothing starting with nothing at
// work means: look again (a wait ended).
func (r *Runner) startSlots(ctx context.Context, running int, done chan<- slotDone) (int, *Result, error) {
	if ctx.Err() != nil {
		return 0, &Result{Reason: Interrupted, Message: "interrupted"}, nil
	}
	if consumeStop(r.p) {
		return 0, &Result{Reason: Stopped, Message: "stopped on request"}, nil
	}
	if r.paused() {
		if running == 0 {
			r.holdWhilePaused(ctx)
		}
		return 0, nil, nil // the slots at work finish; none starts
	}
	if err := r.ledger.CheckIntact(); err != nil {
		return 0, nil, err
	}
	t, ok := r.loadInputs(ctx)
	if !ok {
		return 0, nil, nil
	}
	r.ledger.SetKeepRuns(r.cfg.Loop.KeepRuns)
	if settled, err := r.settleAttempts(t); err != nil || !settled {
		return 0, nil, err
	}
	ix := tree.NewIndex(t)
	free := min(r.parallelism(), config.MaxParallel) - running
	if free <= 0 {
		return 0, nil, nil
	}
	nodes, sel := tree.SelectN(t, ix, r.cfg.Loop.MaxAttempts, free, r.busyTasks())
	if len(nodes) == 0 || sel.State != tree.Selectable {
		return 0, r.noneSelectable(ctx, running, sel, ix), nil
	}
	if res := r.verdict(sel, ix); res != nil {
		return 0, res, nil // blocked, with loop.on_blocked = "stop"
	}
	if r.in.waiting != "" {
		r.in.waiting = ""
		fmt.Fprintf(r.opts.Notices, "runner: going on with %s\n", inert.Line(sel.Path))
	}
	if running > 0 && len(r.chain.links) > 0 && r.chain.pick(rateLimitClock()) == nil {
		return 0, nil, nil // every executor is limited: what works goes on, nothing starts
	}
	if err := r.withBase(ctx, ""); err != nil {
		return 0, nil, err
	}
	return r.startEach(ctx, t, ix, nodes, done)
}

// noneSelectable is the end of the run when no task can start at a
// boundary with running slots at work (nil: look again once one ends,
// what works may make more selectable): stuck by a blocked task with
// loop.on_blocked = "stop", or with none at work, complete or stuck,
// waited out with --watch.
func (r *Runner) noneSelectable(ctx context.Context, running int, sel tree.Selection, ix *tree.Index) *Result {
	if running > 0 {
		if res := r.verdict(sel, ix); res != nil && res.Reason == Stuck && len(sel.Blocked) > 0 && r.cfg.Loop.OnBlocked == "stop" {
			return res
		}
		return nil
	}
	res := r.verdict(sel, ix)
	if res == nil || !r.opts.Watch {
		return res
	}
	if res.Message != r.in.waiting {
		r.notifyResult(res)
	}
	r.waitWatching(ctx, res.Message)
	return nil
}

// startEach begins an iteration on each of nodes, in the order selected,
// in a free slot, and starts its goroutine: it returns how many, or the
// end of the run when a limit is reached, or an error.
func (r *Runner) startEach(ctx context.Context, t *tree.Tree, ix *tree.Index, nodes []*tree.Node, done chan<- slotDone) (int, *Result, error) {
	started := 0
	for _, node := range nodes {
		if res := r.limitReached(); res != nil {
			return started, res, nil
		}
		s, err := r.freeSlot(ctx, node.ID)
		if err != nil {
			return started, nil, err
		}
		// Begun here, in the order selected: iteration numbers follow the
		// tree's order.
		l := r.laneFor(s)
		move := s.ck.Move(node.ID)
		it, err := r.open(ctx, l, t, ix, node)
		if err != nil && move != nil {
			// Not begun: the slot is moved now, as it says it is.
			if merr := move(ctx); merr != nil {
				s.ck.Unknown()
			}
		}
		if errors.Is(err, errNoIteration) {
			continue // set aside before it began: another executor goes on
		}
		if err != nil {
			return started, nil, err
		}
		s.busy = node.ID
		r.count++
		started++
		go r.slotWork(ctx, s, it, move, done)
	}
	return started, nil, nil
}

// busyTasks are the tasks the slots work on.
func (r *Runner) busyTasks() []string {
	var ids []string
	for _, s := range r.par.slots {
		if s.busy != "" {
			ids = append(ids, s.busy)
		}
	}
	return ids
}

// freeSlot returns a free slot for task node: the one that holds its last
// attempt, if free, else the lowest free one, opened when needed.
func (r *Runner) freeSlot(ctx context.Context, node string) (*slot, error) {
	n := min(r.parallelism(), config.MaxParallel)
	var first *slot
	for id := 1; id <= n; id++ {
		s, err := r.slotFor(ctx, id)
		if err != nil {
			return nil, err
		}
		if s.busy != "" {
			continue
		}
		if s.ck.Holds(node) {
			return s, nil
		}
		if first == nil {
			first = s
		}
	}
	if first == nil {
		return nil, fmt.Errorf("no free slot for task %s", node)
	}
	return first, nil
}

// slotWork carries on iteration it, begun in slot s: it makes move (the
// slot brought to the iteration's checkpoint, startSlot) without the
// run's lock, then goes on under it (given up while processes work), and
// says on done how it ended.
func (r *Runner) slotWork(ctx context.Context, s *slot, it *underway, move func(context.Context) error, done chan<- slotDone) {
	var merr error
	if move != nil {
		merr = move(ctx)
	}
	var err error
	r.env.Lock.Inside(func() { err = r.slotWorkLocked(ctx, s, it, merr) })
	done <- slotDone{s: s, err: err}
}

// slotWorkLocked is slotWork under the run's lock, the slot's move made
// (merr: how it failed).
func (r *Runner) slotWorkLocked(ctx context.Context, s *slot, it *underway, merr error) (err error) {
	switch {
	case merr != nil && ctx.Err() != nil:
		// Interrupted on the way: no agent started, nothing was tried.
		s.ck.Unknown() // reset as a whole before its next task
		why := "the run was interrupted before the agent started"
		if err = r.ledger.SetAside(it.meta, why+"; no attempt was spent", errors.New(why)); err == nil {
			err = errNoIteration
		}
	case merr != nil:
		s.ck.Unknown()
		err = r.failedBeforeAgent(it.meta, merr)
	default:
		err = r.work(ctx, it)
		s.ck.Clean(ctx, r.env.Lock.Outside)
	}
	return err
}
