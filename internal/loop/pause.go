package loop

import (
	"context"
	"fmt"
	"os"

	"github.com/runner-cli/runner/internal/watch"
)

// paused reports whether `runner pause` is in effect.
func (r *Runner) paused() bool {
	_, err := os.Lstat(r.p.PauseRequest())
	return err == nil
}

// holdWhilePaused holds the run at an iteration boundary while `runner
// pause` is in effect, until `runner resume`, `runner stop` or ctx. It
// reports whether it held; the caller then looks at the stop request and
// ctx before going on. The hold watches state/ (watch.Until), so a
// resume or a stop wakes it at once.
func (r *Runner) holdWhilePaused(ctx context.Context) bool {
	if !r.paused() {
		return false
	}
	r.ledger.FlushOrLog() // a hold may be long: run_state.json says where the loop stands
	fmt.Fprintf(r.opts.Notices, "runner: paused: no iteration starts until `runner resume` (`runner stop` or Ctrl-C ends the run)\n")
	recheck := recheckWatching
	if r.in.recheck > 0 {
		recheck = r.in.recheck
	}
	watch.Until(ctx, []string{r.p.PauseRequest(), r.p.StopRequest()}, watch.Wait{
		Recheck: recheck, Poll: recheckPolling,
		Options: watch.Options{OnError: func(err error) { r.log.Warn("watching .runner/state while paused", "err", err) }},
		Unwatched: func(err error) {
			r.log.Warn("cannot watch .runner/state while paused; checking every second instead", "err", err)
		},
	}, func() bool { return !r.paused() || r.stopRequested() })
	if !r.paused() && ctx.Err() == nil {
		fmt.Fprintf(r.opts.Notices, "runner: resumed\n")
	}
	return true
}
