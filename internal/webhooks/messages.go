package webhooks

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/notify"
	"github.com/runner-cli/runner/internal/outcome"
	"github.com/runner-cli/runner/internal/ratelimit"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
	"github.com/runner-cli/runner/internal/tree"
)

// reportHint points to the page that says the rest.
const reportHint = ". `runner report` has the run on one page"

// Failed tells that the run stopped on err; gaveUp says a usage or rate
// limit outlasted loop.max_wait, which is a limit, not an error.
func (h *Hooks) Failed(err error, gaveUp bool) {
	if gaveUp {
		h.Send(notify.Limit, "the run stopped: "+textfmt.OneLine(err.Error(), 1200))
		return
	}
	h.Send(notify.Error, "the run stopped on an error (exit 1): "+clip(err.Error(), 1500)+reportHint)
}

// Complete tells that the tree is complete (message), the work on
// branch ("" without git checkpoints).
func (h *Hooks) Complete(message, branch string) {
	if branch != "" {
		message += fmt.Sprintf("; the work is on branch %s", branch)
	}
	h.Send(notify.Complete, message+reportHint)
}

// Stuck tells that the run is stuck (message).
func (h *Hooks) Stuck(message string) { h.Send(notify.Stuck, message+reportHint) }

// Limit tells that the run reached a limit with work left (message).
func (h *Hooks) Limit(message string) { h.Send(notify.Limit, message+reportHint) }

// Blocked tells that an iteration's task became blocked, with the
// agent's question and the commands to go on.
func (h *Hooks) Blocked(meta *state.Meta, node *tree.Node, msg *executor.Message) {
	if meta.NodeStatus != string(tree.StatusBlocked) || node == nil {
		return
	}
	var b strings.Builder
	if node.BlockedReason == outcome.ReasonExhausted {
		fmt.Fprintf(&b, "task %s used up its attempts (iteration %d was its last); `runner show %d` has what failed.\nTo go on: fix the cause, then `runner reset %s`; or `runner skip %s` to count it done without running it.",
			meta.NodePath, meta.Iteration, meta.Iteration, meta.Node, meta.Node)
		h.Send(notify.Blocked, b.String())
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
	h.Send(notify.Blocked, b.String())
}

// RateLimit tells that the run waits out a usage or rate limit, and
// until when; maxWait is loop.max_wait.
func (h *Hooks) RateLimit(meta *state.Meta, res *executor.Result, wait, maxWait time.Duration) {
	until := time.Now().Add(wait)
	h.Send(notify.Limit, fmt.Sprintf("the agent hit a usage or rate limit on task %s (iteration %d); the run waits until %s (%s) and tries again, no attempt spent, for at most loop.max_wait (%s) in all. The agent said: %s",
		meta.NodePath, meta.Iteration, until.Format("2006-01-02 15:04 MST"), ratelimit.Round(wait), maxWait, textfmt.OneLine(res.Evidence, 400)))
}

// Tamper tells that an iteration's agent changed files it may not
// (meta.Tamper): the runner's inputs or verify.protect paths. The
// changes are reverted and kept under its run folder, runDir as people
// read it.
func (h *Hooks) Tamper(meta *state.Meta, runDir string) {
	if len(meta.Tamper) == 0 {
		return
	}
	var paths []string
	for _, t := range meta.Tamper {
		paths = append(paths, t.Path+" ("+t.Change+")")
	}
	h.Send(notify.Tamper, fmt.Sprintf("the agent on task %s (iteration %d) changed files it may not change: %s. The attempt failed; the changes were reverted and kept in %s; `runner show %d` has the details.",
		meta.NodePath, meta.Iteration, strings.Join(paths, ", "), runDir, meta.Iteration))
}

// clip bounds s to n bytes at a character boundary, marked with an
// ellipsis.
func clip(s string, n int) string {
	if s = strings.TrimSpace(s); len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
