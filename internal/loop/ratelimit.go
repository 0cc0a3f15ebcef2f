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
	"github.com/runner-cli/runner/internal/tree"
)

// rateLimitClock is the clock the rate-limit waits read reset times
// against; tests replace it.
var rateLimitClock = time.Now

// errRateLimitGaveUp ends a run whose usage or rate limit lasts longer
// than loop.max_wait allows.
var errRateLimitGaveUp = errors.New("usage or rate limit outlasts loop.max_wait")

// rateLimitWait decides how long to wait after the retry-th rate-limited
// run of an iteration (0 for the first), having waited waited already
// (ratelimit.Policy.Wait).
func (r *Runner) rateLimitWait(res *executor.Result, retry int, waited time.Duration) (wait time.Duration, ok bool, why string) {
	return ratelimit.PolicyFrom(r.cfg.Loop).Wait(res.ResetAt, rateLimitClock(), retry, waited)
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
		meta.Iteration, inert.Line(meta.NodePath), inert.Line(res.Class), ratelimit.Round(wait), until.Format("15:04:05"), inert.Line(textfmt.OneLine(res.Evidence, 200)))
	if retry == 0 {
		r.notifyRateLimit(meta, res, wait)
	}
	r.log.Warn("the agent hit a usage or rate limit; waiting", "iteration", meta.Iteration, "node", meta.Node,
		"wait", ratelimit.Round(wait), "waited_so_far", ratelimit.Round(*waited), "max_wait", r.cfg.Loop.MaxWait.Duration)

	switch ratelimit.Sleep(ctx, wait, r.p.StopRequest()) {
	case ratelimit.Interrupted:
		return true, r.endWait(meta, "the run was interrupted while it waited out a usage or rate limit")
	case ratelimit.Stopped:
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
