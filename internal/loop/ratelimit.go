package loop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/ratelimit"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
)

// rateLimitClock is the clock the rate-limit waits read reset times
// against; tests replace it.
var rateLimitClock = time.Now

// errRateLimitGaveUp ends a run whose usage or rate limit lasts longer
// than loop.max_wait allows.
var errRateLimitGaveUp = ratelimit.ErrGaveUp

// waitOutRateLimit records a rate-limited agent run (meta.json, the
// journal, one line on the progress output saying what the runner does),
// marks its executor limited, and goes on with the first executor of the
// chain that is free: another one at once, ending this iteration without
// an attempt spent (done, errNoIteration), or, when every one is limited,
// after waiting for the first whose limit is over: the same executor
// runs again in this iteration (done false), another in the next one.
// done with a nil error: the wait was interrupted or a stop was requested
// (the loop then ends the run); with errRateLimitGaveUp: the limit
// outlasts loop.max_wait.
func (r *Runner) waitOutRateLimit(ctx context.Context, it *underway, res *executor.Result, waited *time.Duration) (done bool, err error) {
	meta, cur := it.meta, it.link
	now := rateLimitClock()
	cur.Hit(r.cfg.Loop, res.Evidence, res.ResetAt, now)
	if next := r.chain.pick(now); next != nil {
		return true, r.switchExecutor(it, res, next)
	}
	e := r.chain.earliest()
	wait, ok, why := e.Wait(r.cfg.Loop, *waited, now)
	rl := state.RateLimitMeta{At: time.Now().UTC(), ExitCode: res.ExitCode, Evidence: res.Evidence, ResetAt: res.ResetAt, WaitMS: wait.Milliseconds()}
	meta.Agent.RateLimits = append(meta.Agent.RateLimits, rl)
	r.noteExecutors()
	// Durable before the wait: a runner killed while it waits spends no
	// attempt (resume.go), as one interrupted or stopped here does.
	if err := r.ledger.Waiting(meta, state.Record{AgentClass: res.Class, Evidence: res.Evidence, Usage: res.Usage, WaitMS: rl.WaitMS}); err != nil {
		return true, err
	}
	if !ok {
		if len(r.chain.links) > 1 {
			why = "every executor is limited; " + e.name() + " is free first: " + why
		}
		cause := fmt.Errorf("%w: %s; evidence: %s. No attempt was spent. Run again once the limit has lifted, or raise loop.max_wait",
			errRateLimitGaveUp, why, strings.TrimRight(res.Evidence, ". "))
		if err := r.ledger.SetAside(meta, cause.Error(), cause); err != nil {
			return true, errors.Join(cause, err)
		}
		return true, cause
	}
	until := time.Now().Add(wait)
	if len(meta.Agent.RateLimits) == 1 {
		r.hooks.RateLimit(meta, res, wait, r.cfg.Loop.MaxWait.Duration) // once per iteration, as its wait begins
	}
	what := "running it again"
	if e != cur {
		what = "running " + e.name()
	}
	fmt.Fprintf(it.lane.Here().Out(), "#%d %-24s agent: %-10s waiting %s (until %s) before %s, no attempt spent: %s\n",
		meta.Iteration, inert.Line(meta.NodePath), inert.Line(res.Class), ratelimit.Round(wait), until.Format("15:04:05"), inert.Line(what), inert.Line(textfmt.OneLine(res.Evidence, 200)))
	r.log.Warn("the agent hit a usage or rate limit; waiting", "iteration", meta.Iteration, "node", meta.Node, "executor", cur.name(),
		"wait", ratelimit.Round(wait), "waited_so_far", ratelimit.Round(*waited), "max_wait", r.cfg.Loop.MaxWait.Duration)

	var slept ratelimit.End
	r.env.Lock.Outside(func() { slept = ratelimit.Sleep(ctx, wait, r.p.StopRequest()) })
	switch slept {
	case ratelimit.Interrupted:
		return true, r.endWait(meta, "the run was interrupted while it waited out a usage or rate limit")
	case ratelimit.Stopped:
		return true, r.endWait(meta, "`runner stop` was asked while the run waited out a usage or rate limit")
	}
	*waited += wait
	e.Until = time.Time{} // waited out
	if e != cur {
		why := fmt.Sprintf("%s hit a usage or rate limit; after waiting %s, the next iteration runs on %s, whose limit is over first; no attempt was spent",
			cur.name(), ratelimit.Round(wait), e.name())
		if err := r.ledger.SetAside(meta, why, errors.New(why)); err != nil {
			return true, err
		}
		return true, errNoIteration
	}
	// The agent runs again: a kill from the moment its next run is marked
	// in executor.log costs an attempt (resumeStarted, agentBegan).
	meta.Phase = state.PhaseStarted
	return false, nil
}

// switchExecutor ends an iteration whose executor cur hit a usage or
// rate limit while next is free: recorded like a wait of nothing
// (meta.json, the rate_limited record), then set aside without an
// attempt spent; the next iteration runs on next.
func (r *Runner) switchExecutor(it *underway, res *executor.Result, next *link) error {
	meta, cur := it.meta, it.link
	meta.Agent.RateLimits = append(meta.Agent.RateLimits, state.RateLimitMeta{At: time.Now().UTC(), ExitCode: res.ExitCode, Evidence: res.Evidence, ResetAt: res.ResetAt})
	r.noteExecutors()
	if err := r.ledger.Waiting(meta, state.Record{AgentClass: res.Class, Evidence: res.Evidence, Usage: res.Usage}); err != nil {
		return err
	}
	fmt.Fprintf(it.lane.Here().Out(), "#%d %-24s agent: %-10s %s is limited until %s; the next iteration runs on %s at once, no attempt spent: %s\n",
		meta.Iteration, inert.Line(meta.NodePath), inert.Line(res.Class), inert.Line(cur.name()), cur.Until.Local().Format("15:04:05"),
		inert.Line(next.name()), inert.Line(textfmt.OneLine(res.Evidence, 200)))
	r.log.Warn("the agent hit a usage or rate limit; switching executor", "iteration", meta.Iteration, "node", meta.Node,
		"executor", cur.name(), "next", next.name(), "limited_until", cur.Until.Format(time.RFC3339))
	why := fmt.Sprintf("%s hit a usage or rate limit (limited until %s); the next iteration runs on %s; no attempt was spent",
		cur.name(), cur.Until.UTC().Format(time.RFC3339), next.name())
	if err := r.ledger.SetAside(meta, why, errors.New(why)); err != nil {
		return err
	}
	return errNoIteration
}

// endWait ends an iteration in a rate-limit wait without spending an
// attempt; the loop then sees the interruption or the stop request.
func (r *Runner) endWait(meta *state.Meta, why string) error {
	return r.ledger.SetAside(meta, why+"; no attempt was spent", errors.New(why))
}
