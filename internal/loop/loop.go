// Package loop is the coordinator of a run: it decides and records. At
// each iteration boundary it reads config.toml and tree.json again,
// selects the next task (or, with parallel slots, the next tasks) and
// keeps the run's limits; it begins each iteration durably, writes its
// context files and its prompt, chooses the lane it works in (package
// lane: the run branch's working tree, a slot's, or a worker through
// package remote) and hands it the agent's runs and the judges. From what
// the lane says it decides the outcome (package outcome), has the run
// branch record it in git (package runbranch) and the ledger record it
// (package ledger), which makes every phase durable before the next, so
// that a runner that died picks up where it stopped (resume.go). The
// review (package review), the preflight and the baselines (package
// preflight), the rooms (package room) and the webhooks (package
// webhooks) are each a call away.
//
// It owns the order of an iteration's steps, the executor chain and its
// limits, the waits for a person's fix, and what the run knows of the
// files a person edits while it runs. It must not run an agent or a
// guard itself, nor move the run branch: those are the lanes' and the
// run branch's; docs/architecture.md draws the whole.
package loop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/engine/remote"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/ledger"
	"github.com/runner-cli/runner/internal/live"
	"github.com/runner-cli/runner/internal/outcome"
	"github.com/runner-cli/runner/internal/preflight"
	"github.com/runner-cli/runner/internal/spend"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
	"github.com/runner-cli/runner/internal/webhooks"
)

// Reason says why a run ended.
type Reason int

// Why Run returned.
const (
	Complete      Reason = iota // every leaf is done
	Stuck                       // blocked nodes or nothing selectable
	MaxIterations               // the iteration limit was reached with work left
	Stopped                     // `runner stop` asked for it
	Interrupted                 // SIGINT/SIGTERM
	OnceDone                    // --once ran its iteration
)

// Result is how a run ended.
type Result struct {
	Reason     Reason
	Iterations int    // iterations run by this invocation
	Message    string // one line for the user
}

// Options configure one `runner run`.
type Options struct {
	Paths         state.Paths
	MaxIterations int // 0: loop.max_iterations from the config
	Once          bool
	// Watch keeps the run going when the tree is complete or stuck: it
	// waits for tree.json or config.toml to change instead of returning.
	Watch    bool
	Progress io.Writer // one line per iteration
	// Live is told when an iteration's agent starts and when the
	// iteration ends, for a status area on a terminal; nil: none.
	Live Live
	// Notices receives what a person steering the run needs to know: that
	// it is waiting and why, and edits that do not load. Default: Progress.
	Notices io.Writer
	Log     *log.Logger
	// NoPreflight skips the preflight (package preflight) of this run.
	NoPreflight bool
	// Parallel overrides loop.parallel when above 0 (SPEC §14). Once
	// works on one task whatever it says.
	Parallel int
}

// Runner is one run of the loop over one repository.
// Live shows the iterations under way as they happen (package live).
type Live interface {
	// Started: iteration n's agent started on task (its path), in slot,
	// streaming its events to eventsFile.
	Started(n, slot int, task, eventsFile string)
	// Ended: iteration n was recorded or set aside.
	Ended(n int)
	// Paint is line (an iteration's progress line, without its newline)
	// in tone's colour, or line itself where there is no colour
	// (NO_COLOR, TERM=dumb).
	Paint(tone live.Tone, line string) string
}

type Runner struct {
	opts   Options
	p      state.Paths
	log    *log.Logger
	cfg    *config.Config
	ledger *ledger.Ledger
	count  int // iterations run by this invocation

	cache runCache   // work kept between iterations (inputs.go)
	in    inputState // what the run knows of the files a person edits (wait.go)
	chain chain      // the executors and what the run knows of each (fallback.go)

	baselines *preflight.Baselines // the run's preflight and baselines
	hooks     *webhooks.Hooks      // the [[notify]] webhooks
	// meter is what the run has spent: booked, and used by the agents at
	// work (spend.go).
	meter *spend.Meter

	// env is what the run's lanes share (package lane): the run's rooms,
	// its run branch, its lock. par is the run's parallel slots
	// (slots.go), nil when it works on one task at a time; engine the
	// engine whose workers run the iterations (package remote), nil
	// without [engine]. Each iteration works in a lane (laneFor).
	env    *lane.Env
	par    *parallel
	engine *remote.Engine
}

// Run takes the lock, resolves an iteration a previous runner left in
// flight, and loops until the tree is complete, stuck, the iteration
// limit is reached, a stop is requested, or ctx is cancelled. With
// opts.Watch a complete or stuck tree does not end the run: it waits for
// tree.json or config.toml to change.
//
// config.toml and tree.json are re-read at every iteration boundary. The
// first read is strict (a broken input is an error and nothing is
// touched); after that, an input that does not load is reported on
// opts.Notices, left as it is, and waited out, as is a tree.json that
// does not load when an iteration's outcome is to be recorded into it.
// Every wait also ends on `runner stop` (Stopped) and on ctx (Interrupted).
// While `runner pause` is in effect no iteration starts: the run holds
// at the boundary until `runner resume` (pause.go).
func Run(ctx context.Context, opts Options) (res *Result, err error) {
	defer func() { err = withIOHint(err) }()
	if opts.Log == nil {
		opts.Log = log.New(io.Discard)
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.Notices == nil {
		opts.Notices = opts.Progress
	}
	r := &Runner{opts: opts, p: opts.Paths, log: opts.Log}
	r.hooks = webhooks.New(r.p.Root, func() *config.Config { return r.cfg }, r.scrubberFor, r.log, notifyCloseWait)
	defer r.hooks.Close()
	defer func() { r.notifyEnd(ctx, res, err) }()

	// The lock, and what an agent's `git clean` of an earlier run removed
	// put back, before a broken config or tree is refused: nothing else is
	// touched before they are known to be good.
	if r.ledger, err = ledger.Open(r.p, r.log); err != nil {
		return nil, err
	}
	defer r.ledger.Close()
	defer func() { r.engine.Close() }()
	if err := r.start(ctx); err != nil {
		return nil, err
	}
	if err := r.resumeLeft(ctx); err != nil {
		return r.failed(ctx, err)
	}
	if err := r.pruneRefs(ctx); err != nil {
		return nil, err
	}
	if r.engine != nil && len(r.ledger.State().Flights()) == 0 {
		r.engine.CancelOrphans(ctx)
	}
	if ctx.Err() != nil {
		return &Result{Reason: Interrupted, Iterations: r.count, Message: "interrupted"}, nil
	}
	if r.par != nil && (r.parallelism() > 1 || r.engine != nil) && !opts.Once {
		return r.runSlots(ctx)
	}
	r.leaveSlots()
	return r.runSerial(ctx)
}

// runSerial is the loop working on one task at a time: at each boundary
// it reads the inputs again, selects the next task and runs its
// iteration in the run branch's working tree.
func (r *Runner) runSerial(ctx context.Context) (*Result, error) {
	for {
		if ctx.Err() != nil {
			return &Result{Reason: Interrupted, Iterations: r.count, Message: "interrupted"}, nil
		}
		if consumeStop(r.p) {
			return &Result{Reason: Stopped, Iterations: r.count, Message: "stopped on request"}, nil
		}
		if r.holdWhilePaused(ctx) {
			continue // resumed, or a stop or an interruption, seen at the top
		}
		if err := r.ledger.CheckIntact(); err != nil {
			return nil, err
		}
		t, ok := r.loadInputs(ctx)
		if !ok {
			continue // a stop or an interruption, seen at the top
		}
		r.ledger.SetKeepRuns(r.cfg.Loop.KeepRuns)
		settled, err := r.settleAttempts(t)
		if err != nil {
			return nil, err
		}
		if !settled {
			continue // the tree changed on disk meanwhile: read it again
		}
		ix := tree.NewIndex(t)
		sel := tree.Select(t, ix, r.cfg.Loop.MaxAttempts)
		if res := r.verdict(sel, ix); res != nil {
			res.Iterations = r.count
			if !r.opts.Watch {
				return res, nil
			}
			if res.Message != r.in.waiting {
				r.notifyResult(res)
			}
			r.waitWatching(ctx, res.Message)
			continue
		}
		if r.in.waiting != "" {
			r.in.waiting = ""
			fmt.Fprintf(r.opts.Notices, "runner: going on with %s\n", inert.Line(sel.Path))
		}
		if res := r.limitReached(); res != nil {
			return res, nil
		}
		if err := r.withBase(ctx, sel.Node.ID); err != nil {
			return r.failed(ctx, err)
		}
		if err := r.iterate(ctx, r.laneFor(nil), t, ix, sel.Node); errors.Is(err, errNoIteration) {
			continue // another executor goes on, or a wait for one ended
		} else if err != nil {
			return r.failed(ctx, err)
		}
		r.count++
		if ctx.Err() != nil {
			return &Result{Reason: Interrupted, Iterations: r.count, Message: "interrupted"}, nil
		}
		if r.opts.Once {
			return r.afterOnce(), nil
		}
	}
}

// limitReached returns the end of the run when the iteration limit of
// this invocation, or the cost or token budget kept across runs, is
// reached; nil when another iteration may start.
func (r *Runner) limitReached() *Result {
	max := r.opts.MaxIterations
	if max <= 0 {
		max = r.cfg.Loop.MaxIterations
	}
	if !r.opts.Once && r.count >= max {
		return &Result{Reason: MaxIterations, Iterations: r.count,
			Message: fmt.Sprintf("reached max_iterations (%d) with work left; run again to continue", max)}
	}
	return r.budgetExceeded()
}

// afterOnce ends a --once run: stuck when the tree now is, otherwise done.
func (r *Runner) afterOnce() *Result {
	t, err := r.loadTree()
	if err != nil {
		// The iteration is recorded; whether the tree is stuck cannot be
		// told until the person fixes it.
		r.log.Warn("cannot tell whether the tree is stuck", "err", err)
		return &Result{Reason: OnceDone, Iterations: r.count, Message: "ran one iteration"}
	}
	ix := tree.NewIndex(t)
	if res := r.verdict(tree.Select(t, ix, r.cfg.Loop.MaxAttempts), ix); res != nil && res.Reason == Stuck {
		res.Iterations = r.count
		return res
	}
	return &Result{Reason: OnceDone, Iterations: r.count, Message: "ran one iteration"}
}

// failed turns an error that ended an iteration into the run's end: a
// stop asked or an interruption while waiting for a fix ends the run like
// one at a boundary; anything else is an error.
func (r *Runner) failed(ctx context.Context, err error) (*Result, error) {
	if errors.Is(err, errStopWhileWaiting) {
		consumeStop(r.p)
		return &Result{Reason: Stopped, Iterations: r.count, Message: "stopped on request: " + err.Error()}, nil
	}
	if ctx.Err() != nil {
		return &Result{Reason: Interrupted, Iterations: r.count, Message: "interrupted: " + err.Error()}, nil
	}
	return nil, err
}

// withIOHint adds to a failure of the runner's own I/O what a person can
// do about it. Such a failure never costs the task an attempt: the
// iteration it interrupted is retried, or its saved result recorded.
func withIOHint(err error) error {
	var hint string
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		hint = "the disk is full: free some space"
	case errors.Is(err, syscall.EROFS):
		hint = "the file system is read-only: remount it read-write"
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		hint = "the runner may not write there: give it back write access"
	default:
		return err
	}
	return fmt.Errorf("%w\n%s, then run `runner run` again; no task loses an attempt to this", err, hint)
}

// verdict returns a final result when the tree is complete or stuck, or
// nil when there is work to do.
func (r *Runner) verdict(sel tree.Selection, ix *tree.Index) *Result {
	if sel.State == tree.Complete {
		return &Result{Reason: Complete, Message: fmt.Sprintf("tree complete: %d of %d tasks done", sel.DoneLeaves, sel.TotalLeaves)}
	}
	if len(sel.Blocked) > 0 && (r.cfg.Loop.OnBlocked == "stop" || sel.State == tree.Stuck) {
		return &Result{Reason: Stuck, Message: stuckMessage(sel.Blocked, ix)}
	}
	if sel.State == tree.Stuck {
		return &Result{Reason: Stuck, Message: "stuck: no task is selectable (see `runner next`)"}
	}
	return nil
}

// budgetExceeded returns the end of the run when what its agents have
// spent (booked in run_state.json, and used by those at work) has
// reached loop.max_cost_usd or loop.max_tokens, so that no iteration
// starts past them; nil otherwise. It ends the run as max_iterations
// does (exit 4: a limit reached with work left).
func (r *Runner) budgetExceeded() *Result {
	l, u := r.cfg.Loop, r.meter.Spent()
	var msg string
	switch {
	case l.MaxCostUSD > 0 && u.CostUSD >= l.MaxCostUSD:
		msg = fmt.Sprintf("reached loop.max_cost_usd (%s): the agents have cost $%.4f so far", state.Amount(state.UnitUSD, l.MaxCostUSD), u.CostUSD)
	case l.MaxTokens > 0 && u.Tokens() >= l.MaxTokens:
		msg = fmt.Sprintf("reached loop.max_tokens (%d): the agents have used %d tokens so far", l.MaxTokens, u.Tokens())
	default:
		return nil
	}
	return &Result{Reason: MaxIterations, Iterations: r.count,
		Message: msg + " (the total in state/run_state.json, kept across runs) with work left; raise the cap in .runner/config.toml to go on"}
}

// settleAttempts brings the leaves' status in line with their attempt
// limits, which a person may have changed (outcome.Settle). It saves the
// tree only if tree.json still holds what was read; otherwise it reports
// false and the caller reads the person's newer version instead of
// overwriting it.
func (r *Runner) settleAttempts(t *tree.Tree) (bool, error) {
	changed := r.enforceOwned(t)
	if r.settleCaps(t) {
		changed = true
	}
	t.Walk(func(n *tree.Node) {
		if !n.IsLeaf() {
			return
		}
		f, moved := outcome.Settle(outcome.FieldsOf(n), n.AttemptLimit(r.cfg.Loop.MaxAttempts))
		if !moved {
			return
		}
		if f.Status == "" {
			r.log.Info("reopening a task whose attempt limit was raised", "node", n.ID, "attempts", n.Attempts, "max_attempts", n.AttemptLimit(r.cfg.Loop.MaxAttempts))
		}
		f.Set(n)
		r.ledger.Own(n.ID, string(f.Status), f.Attempts, f.BlockedReason)
		changed = true
	})
	if r.settleCaps(t) { // a task reopened for its attempts may be over its cap
		changed = true
	}
	if t.Normalize() {
		changed = true
	}
	if !changed {
		return true, nil
	}
	if sumFile(r.p.Tree()) != r.in.seen.tree {
		return false, nil
	}
	if err := tree.Save(r.p.Tree(), t); err != nil {
		return false, err
	}
	r.in.seen.tree = sumBytes(tree.Marshal(t))
	return true, nil
}
