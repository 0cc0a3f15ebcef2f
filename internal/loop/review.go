package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/outcome"
	"github.com/runner-cli/runner/internal/prompt"
	"github.com/runner-cli/runner/internal/ratelimit"
	"github.com/runner-cli/runner/internal/review"
	"github.com/runner-cli/runner/internal/runbranch"
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

// reviewWanted reports whether the iteration waits for a verdict:
// [review] is on, the agent ran cleanly and says done, the guards did not
// fail, and no verdict is recorded yet.
func (r *worker) reviewWanted(meta *state.Meta) bool {
	return r.cfg.Review.Enabled && meta.Agent != nil && meta.Agent.Class == executor.ClassOK &&
		meta.AgentStatus == executor.StatusDone && meta.Guard != state.GuardFail &&
		(meta.Review == nil || meta.Review.Verdict == "")
}

// afterGuards carries on an iteration whose guards are done: the review,
// when it waits for one, then the record. A runner resuming an iteration
// left in phase guards_done, reviewing or reviewed comes in here. An
// interruption during the review leaves the iteration in flight (nil).
func (r *worker) afterGuards(ctx context.Context, meta *state.Meta) error {
	if r.reviewWanted(meta) {
		if err := r.review(ctx, meta); err != nil || ctx.Err() != nil {
			return err
		}
	}
	if err := r.noteRejection(meta); err != nil {
		return err
	}
	if r.slot > 0 && outcomeOf(meta) == state.OutcomeDone {
		if err := r.integrate(ctx, meta, r.titleOf(meta.Node)); err != nil || ctx.Err() != nil {
			return err // interrupted: the guards run again on resume
		}
	}
	return r.record(ctx, meta)
}

// integrate brings the finished task of the slot at work onto the run
// branch (runbranch.Tree.Integrate), the guards run on the result in the
// slot when the run branch moved meanwhile; a task that could not land
// is journaled as a conflict.
func (r *worker) integrate(ctx context.Context, meta *state.Meta, title string) error {
	guards := func(ctx context.Context, dir, head string) (bool, error) {
		j, err := r.guardsIn(ctx, meta, dir, head)
		return j.Verdict == state.GuardPass, err
	}
	if err := r.ck.Integrate(ctx, r.cfg, meta, title, r.out, guards, r.outside); err != nil || meta.Conflict == nil {
		return err
	}
	c := meta.Conflict
	return r.ledger.Journal(state.Record{Iteration: meta.Iteration, Node: meta.Node, Slot: meta.Slot, Event: state.EventConflict,
		Paths: c.Files, Summary: runbranch.ConflictWhat(c)})
}

// reviewAnswer is what one run of the reviewer gave: a verdict, or why
// it gave none (limited: a usage or rate limit, to be waited out).
type reviewAnswer struct {
	verdict *executor.Verdict
	why     string
	limited *executor.Result
}

// review asks the reviewer until it gives a verdict, and makes it
// durable (phase reviewed). It returns an error that ends the run, the
// iteration left in flight for the next run to ask again, when the
// reviewer failed loop.max_consecutive_errors times in a row or its
// limit outlasts loop.max_wait; nil with nothing recorded when ctx ended.
func (r *worker) review(ctx context.Context, meta *state.Meta) error {
	rc := r.cfg.Review
	rv := meta.Review
	if rv == nil {
		rv = &state.ReviewMeta{}
		meta.Review = rv
	}
	rv.Executor = rc.Label()
	hold, changed, kept, err := r.holdWork(ctx, meta)
	if err != nil {
		return err
	}
	fsutil.FailAt(fsutil.FailReview, "held")
	fails := &reviewFailures{}
	if len(changed) > 0 {
		// A runner that died during the review left what its reviewer
		// changed: put back now, and that review failed.
		rv.Kept = kept
		if err := r.reviewFailed(meta, reviewAnswer{why: changedWhy(changed, kept)}); err != nil {
			return err
		}
	}
	for ctx.Err() == nil {
		ans, err := r.askReviewer(ctx, meta, hold)
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
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
		if err := r.reviewFailed(meta, ans); err != nil {
			return err
		}
		if err := r.beforeAskingAgain(ctx, meta, ans, fails); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil // asked again by the next run
	}
	if rv.Verdict == executor.VerdictReject {
		n, err := r.ledger.Rejections(meta.Node, func(id string) bool { return coversNode(meta.NodePath, id) }, meta.Iteration)
		if err != nil {
			return err
		}
		rv.Rejection = n + 1
	}
	if err := r.ledger.Reviewed(meta); err != nil {
		return err
	}
	hold.release(ctx)
	return nil
}

// reviewFailures is what a review knows of its reviewer's failures: its
// limits and backoff, the time waited on them, and its failures in a row.
type reviewFailures struct {
	lim    link
	waited time.Duration
	inRow  int
}

// beforeAskingAgain decides what follows a run of the reviewer that gave
// no verdict: a usage or rate limit is waited out (within
// loop.max_wait); other failures are counted, and at
// loop.max_consecutive_errors in a row the run stops (an error), the
// iteration left for the next run to review; with that cap off, the
// reviewer is asked again after a growing pause.
func (r *worker) beforeAskingAgain(ctx context.Context, meta *state.Meta, ans reviewAnswer, f *reviewFailures) error {
	if ans.limited != nil {
		now := rateLimitClock()
		f.lim.limit(r.cfg.Loop, ans.limited, now)
		wait, ok, why := r.limitWait(&f.lim, f.waited, now)
		if !ok {
			return fmt.Errorf("%w: the reviewer: %s. The task waits in iteration %d for a verdict; run again once the limit has lifted, or raise loop.max_wait",
				errRateLimitGaveUp, why, meta.Iteration)
		}
		f.waited += wait
		return r.reviewPause(ctx, meta, wait, "its usage or rate limit")
	}
	f.lim.clear() // the reviewer ran and hit no limit
	f.inRow++
	limit := r.cfg.Loop.MaxConsecutiveErrors
	if limit > 0 && f.inRow >= limit {
		return fmt.Errorf("stopping: the reviewer (%s) failed %d times in a row (loop.max_consecutive_errors = %d); the last time: %s. "+
			"Task %s spent no attempt: it waits in iteration %d for a verdict, asked again by the next run; check that the reviewer runs (`runner show %d`)",
			meta.Review.Executor, f.inRow, limit, firstLineOf(ans.why), meta.NodePath, meta.Iteration, meta.Iteration)
	}
	if limit <= 0 {
		// Nothing stops a reviewer that always fails: not in a hurry.
		pause := min(r.cfg.Loop.RateLimitBackoff.Duration<<min(f.inRow-1, 16), r.cfg.Loop.RateLimitBackoffMax.Duration)
		return r.reviewPause(ctx, meta, pause, "a failed review")
	}
	return nil
}

// askReviewer runs the reviewer once on the work held, and puts back
// whatever it changed (which fails that review, verdict or not). The
// error is for the runner's own failures.
func (r *worker) askReviewer(ctx context.Context, meta *state.Meta, hold *heldWork) (reviewAnswer, error) {
	rc, rv, n := r.cfg.Review, meta.Review, meta.Iteration
	dir := r.reviewDir(n)
	if err := r.keepEarlierAsk(dir); err != nil {
		return reviewAnswer{}, err
	}
	pack, err := r.reviewPrompt(ctx, meta, hold)
	if err != nil {
		return reviewAnswer{}, err
	}
	if err := prompt.WriteRunFolder(dir, n, meta.Node, pack); err != nil {
		return reviewAnswer{}, err
	}
	if cur, err := fsutil.ReadFile(r.p.ReviewSchema()); err != nil || string(cur) != executor.ReviewSchema {
		if err := fsutil.WriteFileAtomic(r.p.ReviewSchema(), []byte(executor.ReviewSchema), 0o644); err != nil {
			return reviewAnswer{}, err
		}
	}
	opts := r.optionsFor(rc.Executor)
	opts.Review = true
	room, tmp, err := r.rooms.Room(r.cfg, n, r.workDir)
	if err != nil {
		return reviewAnswer{}, err
	}
	if tmp != "" {
		tmp = filepath.Join(tmp, "review")
		if err := os.MkdirAll(tmp, 0o700); err != nil {
			return reviewAnswer{}, err
		}
	}
	req := executor.Request{
		Root: r.workDir, RunnerDir: r.p.Dir, RunDir: dir, Iteration: n, NodeID: meta.Node,
		Prompt: []byte(pack.Text), PromptFile: filepath.Join(dir, "prompt.md"), SchemaFile: r.p.ReviewSchema(),
		OnStart: func(_, pgid int) { r.inside(func() { r.ledger.ReviewStarted(n, pgid) }) },
		Confine: room, OutputDir: tmp, Env: tmpEnv(tmp),
	}
	fmt.Fprintf(r.out, "#%d %-24s review: asking %s\n", n, inert.Line(meta.NodePath), inert.Line(rv.Executor))
	// It may change its judges no more than the agent may (judges.go).
	judgesDir := filepath.Join(dir, "judges")
	run, err := iteration.RunProgram(ctx, r.programSpec(opts, req, judgesDir, "review/judges/"))
	if err != nil {
		return reviewAnswer{}, err
	}
	r.stopEscapedAgent(n)
	forged, err := r.forgedRunState(judgesDir, "review/judges/")
	if err != nil {
		return reviewAnswer{}, err
	}
	res, runErr, judges := run.Result, run.StartErr, append(run.Tamper, forged...)
	if judges, err = r.branch.WithMoved(ctx, n, judges); err != nil {
		return reviewAnswer{}, err
	}
	changed, kept, err := hold.putBack(ctx)
	if err != nil {
		return reviewAnswer{}, err
	}
	if len(judges) > 0 {
		changed = append(changed, tamperedPaths(judges)...)
		if kept == "" {
			kept = "runs/" + filepath.Base(r.p.RunDir(n)) + "/review/judges/"
		}
	}
	rv.Asked++
	if res != nil && res.Usage != nil {
		if rv.Usage == nil {
			rv.Usage = &state.Usage{}
		}
		rv.Usage.Add(*res.Usage)
	}
	var se *executor.StartError
	switch {
	case len(changed) > 0:
		rv.Kept = kept
		return reviewAnswer{why: changedWhy(changed, kept)}, nil
	case errors.As(runErr, &se):
		return reviewAnswer{why: "the reviewer could not be started: " + runErr.Error()}, nil
	case runErr != nil:
		return reviewAnswer{}, runErr
	case res.Class == executor.ClassOK && res.Verdict != nil:
		return reviewAnswer{verdict: res.Verdict}, nil
	case res.Class == executor.ClassRateLimited:
		return reviewAnswer{why: res.Error, limited: res}, nil
	case res.Error != "":
		return reviewAnswer{why: res.Error}, nil
	}
	return reviewAnswer{why: "the reviewer gave no valid verdict: " + res.MessageError}, nil
}

// keepEarlierAsk moves what an earlier run of the reviewer left in dir
// (its log, events and output) into dir/ask-<k>/, so that each run's
// files stay apart.
func (r *worker) keepEarlierAsk(dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, executor.LogFileName)); err != nil {
		return nil
	}
	k := 1
	for ; ; k++ {
		if _, err := os.Lstat(filepath.Join(dir, fmt.Sprintf("ask-%d", k))); err != nil {
			break
		}
	}
	to := filepath.Join(dir, fmt.Sprintf("ask-%d", k))
	if err := fsutil.MkdirAll(to, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"prompt.md", "context.json", executor.LogFileName, executor.EventsFileName, executor.OutputFileName, executor.ExitFileName} {
		if err := fsutil.Rename(filepath.Join(dir, name), filepath.Join(to, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// reviewPrompt builds the reviewer's prompt: the task as tree.json has
// it now, the agent's summary, the guard results and the changes.
func (r *worker) reviewPrompt(ctx context.Context, meta *state.Meta, hold *heldWork) (*prompt.Pack, error) {
	in := review.Input{Path: meta.NodePath, ID: meta.Node, Summary: meta.Summary, Budget: int(r.cfg.Prompt.Budget)}
	if t, err := r.loadTree(); err == nil {
		if node := t.Find(meta.Node); node != nil {
			in.Title, in.Goal, in.Acceptance = node.Title, node.Goal, node.Acceptance
		}
	}
	for _, g := range meta.Guards {
		in.Guards = append(in.Guards, fmt.Sprintf("%s: %s, exit %d, %.1fs", g.Name, g.Status, g.ExitCode, float64(g.DurationMS)/1000))
	}
	var err error
	if in.Changes, in.ChangesNote, err = hold.changes(ctx, meta.StartedAt, in.Budget); err != nil {
		return nil, fmt.Errorf("the changes for the review: %w", err)
	}
	scrubber, err := r.scrubberFor(r.cfg)
	if err != nil {
		return nil, err
	}
	in.Redactor = scrubber
	return review.Build(in)
}

// reviewFailed records a run of the reviewer that gave no verdict: in
// meta.json's review (not as a verdict), the journal, and one line of
// progress.
func (r *worker) reviewFailed(meta *state.Meta, ans reviewAnswer) error {
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
	fmt.Fprintf(r.out, "#%d %-24s review: failed, no verdict, asking again (no attempt spent): %s\n",
		meta.Iteration, inert.Line(meta.NodePath), inert.Line(textfmt.OneLine(ans.why, 200)))
	r.log.Warn("the reviewer gave no verdict; asking again", "iteration", meta.Iteration, "node", meta.Node, "reviewer", rv.Executor, "why", firstLineOf(ans.why))
	return r.ledger.ReviewFailed(meta, rec)
}

// reviewPause waits before the reviewer is asked again; a stop or a
// signal ends the run, the iteration left for the next one to review.
func (r *worker) reviewPause(ctx context.Context, meta *state.Meta, wait time.Duration, why string) error {
	fmt.Fprintf(r.out, "#%d %-24s review: waiting %s (until %s) for %s\n", meta.Iteration, inert.Line(meta.NodePath),
		ratelimit.Round(wait), time.Now().Add(wait).Format("15:04:05"), why)
	var slept ratelimit.End
	r.outside(func() { slept = ratelimit.Sleep(ctx, wait, r.p.StopRequest()) })
	switch slept {
	case ratelimit.Stopped:
		return fmt.Errorf("the review of iteration %d is asked again by the next run (%w)", meta.Iteration, errStopWhileWaiting)
	}
	return nil
}

// changedWhy says what a reviewer changed in the work and where it is
// kept.
func changedWhy(changed []string, kept string) string {
	list := changed
	if len(list) > 10 {
		list = append(list[:10:10], fmt.Sprintf("and %d more", len(changed)-10))
	}
	return fmt.Sprintf("the reviewer changed the work, which it may only read: %s; put back, and what it made of them kept in %s",
		strings.Join(list, ", "), kept)
}

// coversNode reports whether the node id is the node at path (its ids
// joined by "/") or one of its ancestors.
func coversNode(path, id string) bool {
	for _, p := range strings.Split(path, "/") {
		if p == id {
			return true
		}
	}
	return false
}

// noteRejection writes, for an iteration whose reviewer rejected the
// work, the reasons into its failure.log, which the next attempt's
// failure.md is made of (the run state's last_guard says fail). Written
// again when the outcome is recorded again after a crash.
func (r *worker) noteRejection(meta *state.Meta) error {
	rv := meta.Review
	if rv == nil || rv.Verdict != executor.VerdictReject {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The guards passed, but the reviewer (%s) rejected the work of iteration %d", rv.Executor, meta.Iteration)
	if rv.Rejection > 0 {
		fmt.Fprintf(&b, " (rejection %d of %d before the task is blocked)", rv.Rejection, r.cfg.Review.MaxRejections)
	}
	b.WriteString(". Fix each of these:\n\n")
	for _, reason := range rv.Reasons {
		b.WriteString("- " + strings.ReplaceAll(strings.TrimSpace(reason), "\n", "\n  ") + "\n")
	}
	return fsutil.ReplaceFile(filepath.Join(r.p.RunDir(meta.Iteration), "failure.log"), []byte(b.String()), 0o644, fsutil.NotSynced)
}

// reviewVerdict is the verdict the outcome is decided with: "" without
// a review.
func reviewVerdict(meta *state.Meta) string {
	if meta.Review == nil {
		return ""
	}
	return meta.Review.Verdict
}

// afterRejection blocks a task at its review.max_rejections-th rejection
// (outcome.Rejected), given the fields outcome.Apply left.
func (r *worker) afterRejection(meta *state.Meta, f outcome.Fields) outcome.Fields {
	if meta.Outcome != state.OutcomeRejected || meta.Review == nil {
		return f
	}
	return outcome.Rejected(f, meta.Review.Rejection, r.cfg.Review.MaxRejections, meta.Review.Reasons)
}
