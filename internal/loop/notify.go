package loop

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/notify"
	"github.com/runner-cli/runner/internal/outcome"
	"github.com/runner-cli/runner/internal/ratelimit"
	"github.com/runner-cli/runner/internal/scrub"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
	"github.com/runner-cli/runner/internal/tree"
)

// notifyCloseWait is the most the end of a run waits for queued
// notifications to go out.
var notifyCloseWait = 5 * time.Second

// webhooks are the `[[notify]]` targets of the config in force, and the
// notifier sending to them (package notify: queued, sent in the
// background, never slowing an iteration). The config is re-read at
// every boundary: a notifier whose targets or scrubber changed is
// replaced, the old one delivering what it holds meanwhile.
type webhooks struct {
	n        *notify.Notifier
	targets  []notify.Target
	scrubber *scrub.Scrubber
	closing  sync.WaitGroup // replaced notifiers, delivering what they hold
}

// notify sends a notification of ev saying text to the configured
// webhooks that want it, and returns at once. text is scrubbed of
// secrets with the prompt's rules (the agent's words can hold what its
// prompt did), made inert and bounded by package notify. The repository
// is named by the notification itself: text need not say which.
func (r *Runner) notify(ev notify.Event, text string) {
	if r.cfg == nil || len(r.cfg.Notify) == 0 {
		return
	}
	n := r.notifier()
	if n == nil {
		return
	}
	n.Send(ev, fmt.Sprintf("%s: %s", r.repoName(), text))
}

// notifier returns the notifier for the config in force, building it
// when the targets or the scrubber changed; nil when it cannot be built
// (warned): nothing is sent unscrubbed.
func (r *Runner) notifier() *notify.Notifier {
	h := &r.hooks
	s, err := r.scrubberFor(r.cfg)
	if err != nil {
		r.log.Warn("notifications are not sent: the secret scrubber cannot be built", "err", err)
		return nil
	}
	if h.n != nil && h.scrubber == s && reflect.DeepEqual(h.targets, r.cfg.Notify) {
		return h.n
	}
	n, err := notify.New(r.cfg.Notify, s, r.log)
	if err != nil {
		// config.Load checked the targets: this is not expected.
		r.log.Warn("notifications are not sent", "err", err)
		return nil
	}
	if old := h.n; old != nil {
		h.closing.Add(1)
		go func() {
			defer h.closing.Done()
			ctx, cancel := context.WithTimeout(context.Background(), notifyCloseWait)
			defer cancel()
			old.Close(ctx)
		}()
	}
	h.n, h.targets, h.scrubber = n, r.cfg.Notify, s
	return n
}

// closeNotify lets the queued notifications go out, for at most
// notifyCloseWait, when the run ends.
func (r *Runner) closeNotify() {
	h := &r.hooks
	if h.n != nil {
		ctx, cancel := context.WithTimeout(context.Background(), notifyCloseWait)
		defer cancel()
		h.n.Close(ctx)
	}
	h.closing.Wait()
}

// repoName names the repository in notifications: its directory's name.
func (r *Runner) repoName() string {
	return filepath.Base(r.p.Root)
}

// notifyEnd tells how the run ended: complete, stuck, a limit, or an
// error. A stop asked for, an interruption and --once's iteration are
// the person's own doing and are not notified.
func (r *Runner) notifyEnd(ctx context.Context, res *Result, err error) {
	switch {
	case err != nil && ctx.Err() == nil:
		if errors.Is(err, errRateLimitGaveUp) {
			r.notify(notify.Limit, "the run stopped: "+textfmt.OneLine(err.Error(), 1200))
			return
		}
		r.notify(notify.Error, "the run stopped on an error (exit 1): "+clip(err.Error(), 1500)+r.reportHint())
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
		text := res.Message
		if r.main != nil {
			text += fmt.Sprintf("; the work is on branch %s", r.main.branch)
		}
		r.notify(notify.Complete, text+r.reportHint())
	case Stuck:
		r.notify(notify.Stuck, res.Message+r.reportHint())
	case MaxIterations:
		r.notify(notify.Limit, res.Message+r.reportHint())
	}
}

// reportHint points to the page that says the rest.
func (r *Runner) reportHint() string {
	return ". `runner report` has the run on one page"
}

// notifyBlocked tells that an iteration's task became blocked, with the
// agent's question and the commands to go on.
func (r *Runner) notifyBlocked(meta *state.Meta, node *tree.Node, msg *executor.Message) {
	if meta.NodeStatus != string(tree.StatusBlocked) || node == nil {
		return
	}
	var b strings.Builder
	if node.BlockedReason == outcome.ReasonExhausted {
		fmt.Fprintf(&b, "task %s used up its attempts (iteration %d was its last); `runner show %d` has what failed.\nTo go on: fix the cause, then `runner reset %s`; or `runner skip %s` to count it done without running it.",
			meta.NodePath, meta.Iteration, meta.Iteration, meta.Node, meta.Node)
		r.notify(notify.Blocked, b.String())
		return
	}
	if msg != nil && meta.Outcome == state.OutcomeBlocked && len(msg.Questions) > 0 {
		// The questions are its blocked reason: said once, after what the
		// agent said of its work.
		fmt.Fprintf(&b, "task %s asks (iteration %d): %s", meta.NodePath, meta.Iteration, clip(msg.Summary, 600))
		for _, q := range msg.Questions {
			fmt.Fprintf(&b, "\n- %s", textfmt.OneLine(q, 400))
		}
	} else {
		fmt.Fprintf(&b, "task %s asks a question (iteration %d): %s", meta.NodePath, meta.Iteration, clip(node.BlockedReason, 1200))
	}
	fmt.Fprintf(&b, "\nTo go on: `runner answer %s \"your answer\"` (it reopens the task, the answer in its prompt); or `runner skip %s` to count it done without running it.",
		meta.Node, meta.Node)
	r.notify(notify.Blocked, b.String())
}

// notifyRateLimit tells that the run waits out a usage or rate limit, and
// until when.
func (r *Runner) notifyRateLimit(meta *state.Meta, res *executor.Result, wait time.Duration) {
	until := time.Now().Add(wait)
	r.notify(notify.Limit, fmt.Sprintf("the agent hit a usage or rate limit on task %s (iteration %d); the run waits until %s (%s) and tries again, no attempt spent, for at most loop.max_wait (%s) in all. The agent said: %s",
		meta.NodePath, meta.Iteration, until.Format("2006-01-02 15:04 MST"), ratelimit.Round(wait), r.cfg.Loop.MaxWait.Duration, textfmt.OneLine(res.Evidence, 400)))
}

// notifyTamper tells that an iteration's agent changed files it may not
// (meta.Tamper): the runner's inputs or verify.protect paths. The changes
// are reverted and kept under the run folder.
func (r *Runner) notifyTamper(meta *state.Meta) {
	if len(meta.Tamper) == 0 {
		return
	}
	var paths []string
	for _, t := range meta.Tamper {
		paths = append(paths, t.Path+" ("+t.Change+")")
	}
	r.notify(notify.Tamper, fmt.Sprintf("the agent on task %s (iteration %d) changed files it may not change: %s. The attempt failed; the changes were reverted and kept in %s; `runner show %d` has the details.",
		meta.NodePath, meta.Iteration, strings.Join(paths, ", "), r.p.Rel(r.p.RunDir(meta.Iteration)), meta.Iteration))
}

// clip bounds s to n bytes at a character boundary, marked with an
// ellipsis.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
