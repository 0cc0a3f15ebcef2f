package loop

import (
	"context"
	"errors"
	"time"
)

// notifyCloseWait is the most the end of a run waits for queued
// notifications to go out.
var notifyCloseWait = 5 * time.Second

// notifyEnd tells the webhooks how the run ended: complete, stuck, a
// limit, or an error. A stop asked for, an interruption and --once's
// iteration are the person's own doing and are not notified.
func (r *Runner) notifyEnd(ctx context.Context, res *Result, err error) {
	switch {
	case err != nil && ctx.Err() == nil:
		r.hooks.Failed(err, errors.Is(err, errRateLimitGaveUp))
	case res != nil:
		r.notifyResult(res)
	}
}

// notifyResult notifies a complete, stuck or limit-reached result; a
// --watch run, which waits instead of ending, sends it once per distinct
// result.
func (r *Runner) notifyResult(res *Result) {
	switch res.Reason {
	case Complete:
		r.hooks.Complete(res.Message, r.env.Branch.Name())
	case Stuck:
		r.hooks.Stuck(res.Message)
	case MaxIterations:
		r.hooks.Limit(res.Message)
	}
}
