package review

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/ratelimit"
	"github.com/runner-cli/runner/internal/spend"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
)

// The review (SPEC §17): with [review], a task whose agent says done and
// whose guards pass is judged by a fresh session of the review executor
// before it is recorded done (and committed). It is a phase of the
// iteration between guards_done and recorded (ledger/review.go): a
// runner that dies during it asks again; a verdict once durable is never
// asked for twice. A reviewer that fails gives no verdict: with
// review.on_error = "wait" it is asked again (its failures in a row count
// toward loop.max_consecutive_errors, its rate limits are waited out), with
// "accept" the task is done and the review marked skipped.

// maxReviewFailures bounds the failures meta.json lists.
const maxReviewFailures = 10

// Ask asks the reviewer until it gives a verdict, and makes it durable
// (phase reviewed). It returns an error that ends the run, the
// iteration left in flight for the next run to ask again, when the
// reviewer failed loop.max_consecutive_errors times in a row or its
// limit outlasts loop.max_wait; nil with nothing recorded when ctx ended.
func (v *Review) Ask(ctx context.Context, meta *state.Meta) error {
	rc := v.Config().Review
	rv := meta.Review
	if rv == nil {
		rv = &state.ReviewMeta{}
		meta.Review = rv
	}
	rv.Executor = rc.Label()
	hold, changed, kept, err := v.holdWork(ctx, meta)
	if err != nil {
		return err
	}
	fsutil.FailAt(fsutil.FailReview, "held")
	fails := &failures{}
	var allowance *spend.Allowance
	if v.Spend != nil {
		a, end := v.Spend(meta)
		defer end()
		allowance = a
	}
	if len(changed) > 0 {
		// A runner that died during the review left what its reviewer
		// changed: put back now, and that review failed.
		rv.Kept = kept
		if err := v.failed(meta, answer{why: changedWhy(changed, kept)}); err != nil {
			return err
		}
	}
	for ctx.Err() == nil {
		if allowance != nil && rv.Usage != nil {
			allowance.Pending = *rv.Usage // its earlier runs, booked with the verdict
		}
		ans, err := v.ask(ctx, meta, hold, allowance)
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			break
		}
		if ans.capped != nil {
			// Stopped at a spend cap: no verdict, and no asking again;
			// the attempt ends there (outcome cost_cap).
			h := *ans.capped
			h.By = "reviewer"
			meta.CostCap, rv.Error = &h, ans.why
			fmt.Fprintf(v.Here.Out(), "#%d %-24s review: stopped at a spend cap: %s\n", meta.Iteration, inert.Line(meta.NodePath), inert.Line(h.String()))
			break
		}
		if ans.verdict != nil {
			fsutil.FailAt(fsutil.FailReview, "verdict")
			rv.Verdict, rv.Reasons, rv.Error = ans.verdict.Verdict, ans.verdict.Reasons, ""
			break
		}
		if rc.OnError == config.OnErrorAccept {
			rv.Verdict, rv.Error = state.VerdictSkipped, ans.why
			break
		}
		if err := v.failed(meta, ans); err != nil {
			return err
		}
		if err := v.beforeAskingAgain(ctx, meta, ans, fails); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil // asked again by the next run
	}
	if rv.Verdict == executor.VerdictReject {
		n, err := v.Ledger.Rejections(meta.Node, func(id string) bool { return coversNode(meta.NodePath, id) }, meta.Iteration)
		if err != nil {
			return err
		}
		rv.Rejection = n + 1
	}
	if err := v.Ledger.Reviewed(meta); err != nil {
		return err
	}
	hold.release(ctx)
	return nil
}

// failures is what a review knows of its reviewer's failures: its
// limits and backoff, the time waited on them, and its failures in a row.
type failures struct {
	lim    ratelimit.Limit
	waited time.Duration
	inRow  int
}

// beforeAskingAgain decides what follows a run of the reviewer that gave
// no verdict: a usage or rate limit is waited out (within
// loop.max_wait); other failures are counted, and at
// loop.max_consecutive_errors in a row the run stops (an error), the
// iteration left for the next run to review; with that cap off, the
// reviewer is asked again after a growing pause.
func (v *Review) beforeAskingAgain(ctx context.Context, meta *state.Meta, ans answer, f *failures) error {
	if ans.limited != nil {
		now := v.Clock()
		f.lim.Hit(v.Config().Loop, ans.limited.Evidence, ans.limited.ResetAt, now)
		wait, ok, why := f.lim.Wait(v.Config().Loop, f.waited, now)
		if !ok {
			return fmt.Errorf("%w: the reviewer: %s. The task waits in iteration %d for a verdict; run again once the limit has lifted, or raise loop.max_wait",
				ratelimit.ErrGaveUp, why, meta.Iteration)
		}
		f.waited += wait
		return v.pause(ctx, meta, wait, "its usage or rate limit")
	}
	f.lim.Clear() // the reviewer ran and hit no limit
	f.inRow++
	limit := v.Config().Loop.MaxConsecutiveErrors
	if limit > 0 && f.inRow >= limit {
		return fmt.Errorf("stopping: the reviewer (%s) failed %d times in a row (loop.max_consecutive_errors = %d); the last time: %s. "+
			"Task %s spent no attempt: it waits in iteration %d for a verdict, asked again by the next run; check that the reviewer runs (`runner show %d`)",
			meta.Review.Executor, f.inRow, limit, firstLineOf(ans.why), meta.NodePath, meta.Iteration, meta.Iteration)
	}
	if limit <= 0 {
		// Nothing stops a reviewer that always fails: not in a hurry.
		pause := min(v.Config().Loop.RateLimitBackoff.Duration<<min(f.inRow-1, 16), v.Config().Loop.RateLimitBackoffMax.Duration)
		return v.pause(ctx, meta, pause, "a failed review")
	}
	return nil
}

// failed records a run of the reviewer that gave no verdict: in
// meta.json's review (not as a verdict), the journal, and one line of
// progress.
func (v *Review) failed(meta *state.Meta, ans answer) error {
	rv := meta.Review
	rv.Error = ans.why
	rv.Failures = append(rv.Failures, textfmt.OneLine(ans.why, 300))
	if len(rv.Failures) > maxReviewFailures {
		rv.Failures = rv.Failures[len(rv.Failures)-maxReviewFailures:]
	}
	rec := state.Record{Executor: rv.Executor, Error: ans.why}
	if ans.limited != nil {
		rec.AgentClass, rec.Evidence = ans.limited.Class, ans.limited.Evidence
	}
	fmt.Fprintf(v.Here.Out(), "#%d %-24s review: failed, no verdict, asking again (no attempt spent): %s\n",
		meta.Iteration, inert.Line(meta.NodePath), inert.Line(textfmt.OneLine(ans.why, 200)))
	v.Log.Warn("the reviewer gave no verdict; asking again", "iteration", meta.Iteration, "node", meta.Node, "reviewer", rv.Executor, "why", firstLineOf(ans.why))
	return v.Ledger.ReviewFailed(meta, rec)
}

// pause waits before the reviewer is asked again; a stop or a
// signal ends the run, the iteration left for the next one to review.
func (v *Review) pause(ctx context.Context, meta *state.Meta, wait time.Duration, why string) error {
	fmt.Fprintf(v.Here.Out(), "#%d %-24s review: waiting %s (until %s) for %s\n", meta.Iteration, inert.Line(meta.NodePath),
		ratelimit.Round(wait), time.Now().Add(wait).Format("15:04:05"), why)
	var slept ratelimit.End
	v.Here.Lock().Outside(func() { slept = ratelimit.Sleep(ctx, wait, v.Paths.StopRequest()) })
	switch slept {
	case ratelimit.Stopped:
		return fmt.Errorf("the review of iteration %d is asked again by the next run (%w)", meta.Iteration, ratelimit.ErrStopped)
	}
	return nil
}

// firstLineOf is the first line of an error's text, without the log tail
// an executor's error announces.
func firstLineOf(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSuffix(s, "; last lines of executor.log:")
}
