package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
	"github.com/runner-cli/runner/internal/tree"
)

// rateLimitClock is the clock the rate-limit waits read reset times
// against; tests replace it.
var rateLimitClock = time.Now

// stopPollEvery is how often a rate-limit wait looks for `runner stop`.
const stopPollEvery = time.Second

// errRateLimitGaveUp ends a run whose usage or rate limit lasts longer
// than loop.max_wait allows.
var errRateLimitGaveUp = errors.New("usage or rate limit outlasts loop.max_wait")

// rateLimitWait decides how long to wait after the retry-th rate-limited
// run of an iteration (0 for the first), having waited waited already.
// ok is false, with the reason, when the wait would go past loop.max_wait.
func (r *Runner) rateLimitWait(res *executor.Result, retry int, waited time.Duration) (wait time.Duration, ok bool, why string) {
	l := r.cfg.Loop
	base, capped := l.RateLimitBackoff.Duration, l.RateLimitBackoffMax.Duration
	left := l.MaxWait.Duration - waited
	if res.ResetAt != nil {
		// The agent named the reset: wait until then, plus a margin.
		wait = max(res.ResetAt.Sub(rateLimitClock()), 0) + base
		if wait > left {
			return 0, false, fmt.Sprintf("the agent's limit resets at %s (in %s), later than loop.max_wait (%s) allows",
				res.ResetAt.Local().Format("2006-01-02 15:04"), roundWait(wait), l.MaxWait.Duration)
		}
		return wait, true, ""
	}
	wait = base
	for i := 0; i < retry && wait < capped; i++ {
		wait *= 2
	}
	wait = min(wait, capped)
	if left <= 0 {
		return 0, false, fmt.Sprintf("the limit has not lifted after waiting %s (loop.max_wait)", roundWait(waited))
	}
	return min(wait, left), true, ""
}

// waitOutRateLimit records a rate-limited agent run (meta.json, the
// journal, one line on the progress output saying what the runner waits
// for), and waits. It returns done = true when the iteration ends here
// without spending an attempt: the wait was interrupted or a stop was
// requested (err nil; the loop then ends the run), or the limit outlasts
// loop.max_wait (err says so).
func (r *Runner) waitOutRateLimit(ctx context.Context, meta *state.Meta, res *executor.Result, retry int, waited *time.Duration) (done bool, err error) {
	wait, ok, why := r.rateLimitWait(res, retry, *waited)
	rl := state.RateLimitMeta{At: time.Now().UTC(), ExitCode: res.ExitCode, Evidence: res.Evidence, ResetAt: res.ResetAt, WaitMS: wait.Milliseconds()}
	meta.Agent.RateLimits = append(meta.Agent.RateLimits, rl)
	// Durable before the wait: a runner killed while it waits spends no
	// attempt (resume.go), as one interrupted or stopped here does.
	if err := r.ledger.Waiting(meta, state.Record{AgentClass: res.Class, Evidence: res.Evidence, Usage: res.Usage, WaitMS: rl.WaitMS}); err != nil {
		return true, err
	}
	if !ok {
		cause := fmt.Errorf("%w: %s; evidence: %s. No attempt was spent. Run again once the limit has lifted, or raise loop.max_wait",
			errRateLimitGaveUp, why, strings.TrimRight(res.Evidence, ". "))
		if err := r.ledger.SetAside(meta, cause.Error(), cause); err != nil {
			return true, errors.Join(cause, err)
		}
		return true, cause
	}
	until := time.Now().Add(wait)
	fmt.Fprintf(r.opts.Progress, "#%d %-24s agent: %-10s waiting %s (until %s) before running it again, no attempt spent: %s\n",
		meta.Iteration, inert.Line(meta.NodePath), inert.Line(res.Class), roundWait(wait), until.Format("15:04:05"), inert.Line(textfmt.OneLine(res.Evidence, 200)))
	if retry == 0 {
		r.notifyRateLimit(meta, res, wait)
	}
	r.log.Warn("the agent hit a usage or rate limit; waiting", "iteration", meta.Iteration, "node", meta.Node,
		"wait", roundWait(wait), "waited_so_far", roundWait(*waited), "max_wait", r.cfg.Loop.MaxWait.Duration)

	switch sleepOrStop(ctx, wait, r.p.StopRequest()) {
	case sleepInterrupted:
		return true, r.endWait(meta, "the run was interrupted while it waited out a usage or rate limit")
	case sleepStopped:
		return true, r.endWait(meta, "`runner stop` was asked while the run waited out a usage or rate limit")
	}
	*waited += wait
	// The agent runs again: a kill from the moment its next run is marked
	// in executor.log costs an attempt (resumeStarted, agentBegan).
	meta.Phase = state.PhaseStarted
	return false, nil
}

// endWait ends an iteration in a rate-limit wait without spending an
// attempt; the loop then sees the interruption or the stop request.
func (r *Runner) endWait(meta *state.Meta, why string) error {
	return r.ledger.SetAside(meta, why+"; no attempt was spent", errors.New(why))
}

type sleepEnd int

const (
	sleptFully sleepEnd = iota
	sleepInterrupted
	sleepStopped
)

// sleepOrStop sleeps for d unless ctx ends or the stop file appears.
func sleepOrStop(ctx context.Context, d time.Duration, stopFile string) sleepEnd {
	timer := time.NewTimer(d)
	defer timer.Stop()
	poll := time.NewTicker(min(stopPollEvery, max(d/4, time.Millisecond)))
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return sleepInterrupted
		case <-timer.C:
			return sleptFully
		case <-poll.C:
			if _, err := os.Stat(stopFile); err == nil {
				return sleepStopped
			}
		}
	}
}

func roundWait(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// tooManyFailures returns the error that stops the run when the agent
// failed loop.max_consecutive_errors times in a row, quoting what it
// printed the last time; nil otherwise.
func (r *Runner) tooManyFailures(meta *state.Meta, res *executor.Result) error {
	limit := r.cfg.Loop.MaxConsecutiveErrors
	if limit <= 0 || !res.AgentFailed || r.ledger.State().ConsecutiveErrors < limit {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "stopping: the agent failed %d times in a row (loop.max_consecutive_errors = %d), across tasks; the last time: %s",
		r.ledger.State().ConsecutiveErrors, limit, firstLineOf(res.Error))
	if res.Evidence != "" {
		fmt.Fprintf(&b, "; the agent printed: %q", textfmt.OneLine(res.Evidence, 400))
	}
	b.WriteString(". Check that the agent runs by hand in this repository (installed? logged in? its flags in executor.args?), then run again; `runner show` has the details")
	if meta.NodeStatus == string(tree.StatusBlocked) {
		fmt.Fprintf(&b, ". Task %s used up its attempts on this: `runner reset %s` reopens it", meta.NodePath, meta.Node)
	}
	return errors.New(b.String())
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSuffix(s, "; last lines of executor.log:")
}
