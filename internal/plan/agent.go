package plan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/ledger"
	"github.com/runner-cli/runner/internal/ratelimit"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
)

// errRateLimitGaveUp ends a plan whose agent's usage or rate limit lasts
// longer than loop.max_wait allows.
var errRateLimitGaveUp = errors.New("usage or rate limit outlasts loop.max_wait")

// agentRun is the planning agent's run: the executor, the request, and
// what the waits follow.
type agentRun struct {
	l        *ledger.Ledger
	opts     executor.Options
	req      executor.Request
	policy   ratelimit.Policy
	progress io.Writer
	now      func() time.Time
}

// run runs the planning agent, as the loop runs an iteration's agent: a
// run that hits a usage or rate limit is waited out (ratelimit.Policy)
// and run again in the same run folder, until the waits add up to
// loop.max_wait. Each run is noted in meta (executor.NoteRun). The keep
// is brought up to date before each run, and what the agent removed of
// the runner's files is put back after it.
//
// It returns the last run's result. The error is a failure of the
// runner's own, the agent that could not be started, or a limit that
// outlasts loop.max_wait (errRateLimitGaveUp); a run interrupted by ctx
// returns its result, with ctx's error left for the caller to see.
func (a *agentRun) run(ctx context.Context, meta *state.Meta) (*executor.Result, error) {
	var waited time.Duration
	for retry := 0; ; retry++ {
		a.req.Retry = retry
		if a.opts.Allowance != nil && meta.Usage != nil {
			a.opts.Allowance.Pending = *meta.Usage // its earlier runs, booked when the plan ends
		}
		a.l.PlanAgentStarting()
		res, err := executor.Run(ctx, a.opts, a.req)
		if ierr := a.l.PlanAgentExited(a.req.Iteration); ierr != nil {
			return res, errors.Join(err, ierr)
		}
		if err != nil {
			return nil, fmt.Errorf("the agent could not be started: %w", err)
		}
		executor.NoteRun(meta, res)
		if res.Class != executor.ClassRateLimited || ctx.Err() != nil {
			return res, nil
		}
		wait, ok, why := a.policy.Wait(res.ResetAt, a.now(), retry, waited)
		meta.Agent.RateLimits = append(meta.Agent.RateLimits, state.RateLimitMeta{
			At: time.Now().UTC(), ExitCode: res.ExitCode, Evidence: res.Evidence, ResetAt: res.ResetAt, WaitMS: wait.Milliseconds()})
		if !ok {
			return res, fmt.Errorf("%w: %s; evidence: %s. Plan again once the limit has lifted, or raise loop.max_wait",
				errRateLimitGaveUp, why, strings.TrimRight(res.Evidence, ". "))
		}
		if err := a.l.SavePlan(meta); err != nil {
			return res, err
		}
		fmt.Fprintf(a.progress, "runner: plan: the agent hit a usage or rate limit; waiting %s (until %s) before running it again: %s\n",
			ratelimit.Round(wait), time.Now().Add(wait).Format("15:04:05"), inert.Line(textfmt.OneLine(res.Evidence, 200)))
		if ratelimit.Sleep(ctx, wait, "") != ratelimit.Slept {
			return res, nil // interrupted: ctx says so
		}
		waited += wait
	}
}
