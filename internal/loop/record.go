package loop

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/ledger"
	"github.com/runner-cli/runner/internal/live"
	"github.com/runner-cli/runner/internal/outcome"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
	"github.com/runner-cli/runner/internal/tree"
)

// record decides a finished iteration's outcome (package outcome), applies
// it to the tree, and has the ledger record it. Everything written is an
// absolute value computed from meta, so recording the same iteration
// twice (after a crash in the middle of recording) gives the same result.
func (r *worker) record(ctx context.Context, meta *state.Meta) error {
	r.stopEscapedAgent(meta.Iteration)
	defer r.rooms.RemoveTempDir(meta.Iteration)
	defer r.prompts.forget(meta.Iteration)
	defer r.iterationEnded(meta.Iteration)
	meta.Outcome = outcomeOf(meta)
	var msg *executor.Message
	if meta.Outcome != state.OutcomeExecutorError && meta.Outcome != state.OutcomeInterrupted {
		m, err := readMessage(r.p.RunDir(meta.Iteration), meta)
		if err != nil {
			return err
		}
		msg = m
	}

	t, err := r.loadTree()
	if err != nil {
		// Waiting for a person to fix tree.json may take long: the results
		// are saved first, so that an interrupted wait loses nothing.
		if err := r.ledger.SaveResults(meta); err != nil {
			return err
		}
		if t, err = r.treeForRecord(ctx, meta.Iteration); err != nil {
			return err
		}
	}
	w := &treeWrite{r: r, ctx: ctx, meta: meta, msg: msg, t: t, loaded: r.cache.trees.sum}
	node := r.applyOutcome(t, meta, &w.msg)
	msg = w.msg
	title := ""
	if node != nil {
		title = node.Title
	}
	// An interrupted iteration is recorded after the interrupt: its git
	// work (keeping the attempt) must not be cut short by it.
	gitCtx := ctx
	if ctx.Err() != nil {
		gitCtx = context.WithoutCancel(ctx)
	}
	if err := r.checkpoint(gitCtx, meta, title); err != nil {
		return err
	}

	rec := ledger.Outcome{Meta: meta, LastStatus: outcome.LastStatus(meta.Outcome, meta.AgentStatus), LastSummary: meta.Summary}
	if meta.Outcome == state.OutcomeExecutorError {
		rec.LastSummary = executorSummary(meta)
	}
	rec.JournalSummary = textfmt.OneLine(rec.LastSummary, 300)
	if node != nil {
		rec.Tree = w
	}
	if msg != nil {
		rec.Assumptions = msg.Assumptions
		rec.Questions = msg.Questions
		if meta.Outcome == state.OutcomeBlocked {
			rec.Questions = append([]string{"blocked: " + msg.Summary}, msg.Questions...)
		}
	}
	if meta.Conflict != nil && meta.Outcome == state.OutcomeGuardFailed {
		rec.LastGuard = state.GuardFail // failure.md: what the integration met
	}
	if meta.Outcome == state.OutcomeRejected {
		rec.LastGuard = state.GuardFail // failure.md: the reviewer's reasons
		if node != nil && node.Status == tree.StatusBlocked && node.BlockedReason != outcome.ReasonExhausted {
			rec.Questions = append([]string{"blocked: " + node.BlockedReason}, rec.Questions...)
		}
	}
	if err := r.ledger.Record(rec); err != nil {
		return err
	}
	r.progress(meta)
	r.hooks.Blocked(meta, node, msg)
	return nil
}

// outcomeOf is the outcome of the iteration meta describes (package
// outcome).
func outcomeOf(meta *state.Meta) string {
	return outcome.Of(outcome.Iteration{
		AgentOK:     meta.Agent != nil && meta.Agent.Class == executor.ClassOK,
		AgentStatus: meta.AgentStatus, Guard: meta.Guard,
		Interrupted: meta.Outcome == state.OutcomeInterrupted,
		Review:      reviewVerdict(meta),
		Tampered:    len(meta.Tamper) > 0,
		Conflicted:  meta.Conflict != nil,
	})
}

// recordInterrupted records an iteration whose agent was working when it
// was cut short: it counts as an attempt, and the retry is told the
// working tree may hold partial changes.
func (r *worker) recordInterrupted(ctx context.Context, meta *state.Meta, why string) error {
	meta.Outcome = state.OutcomeInterrupted
	meta.AgentStatus = ""
	meta.Guard = state.GuardSkipped
	meta.Summary = fmt.Sprintf("Iteration %d was interrupted before it finished (%s). The working tree may hold partial changes from that attempt: check `git status` and `git diff` before building on them.", meta.Iteration, why)
	if meta.Agent != nil && meta.Agent.LogTail != "" {
		meta.Summary += "\n\nLast lines of the agent's output:\n" + meta.Agent.LogTail
	}
	return r.record(ctx, meta)
}

// applyOutcome applies meta's outcome to t: a decomposition's children,
// then the node's runner-owned fields (outcome.Apply), and notes the
// result in meta. Children that do not fit the tree (an id already used,
// say) make the message invalid: the outcome becomes an executor error,
// which the next attempt is told about, and *msg is cleared. It returns
// the node, or nil when it was removed from the tree.
func (r *worker) applyOutcome(t *tree.Tree, meta *state.Meta, msg **executor.Message) *tree.Node {
	node := t.Find(meta.Node)
	if node == nil {
		meta.Note = fmt.Sprintf("node %s was removed from the tree during the iteration; outcome not applied", meta.Node)
		r.log.Warn("the node was removed from the tree during the iteration; outcome not applied", "iteration", meta.Iteration, "node", meta.Node)
		return nil
	}
	if meta.Outcome == state.OutcomeDecomposed && len(node.Children) == 0 {
		if err := t.AddChildren(nil, node.ID, (*msg).Children); err != nil {
			meta.Outcome = state.OutcomeExecutorError
			meta.Agent.Class = executor.ClassAgentError
			meta.Agent.Error = "invalid decomposition: " + err.Error()
			*msg = nil
		}
	}
	reason := ""
	if *msg != nil {
		reason = outcome.BlockedReason((*msg).Summary, (*msg).Questions)
	}
	f := outcome.FieldsOf(node)
	if !(meta.Outcome == state.OutcomeInterrupted && meta.NoAttempt) {
		f = outcome.Apply(f, meta.Outcome, meta.Attempt, node.AttemptLimit(r.cfg.Loop.MaxAttempts), reason)
	}
	f = r.afterRejection(meta, f)
	f.Set(node)
	if node.IsLeaf() {
		r.ledger.Own(node.ID, string(f.Status), f.Attempts, f.BlockedReason)
	}
	t.Normalize()
	meta.NodeStatus = string(node.EffectiveStatus())
	meta.Attempts = node.Attempts
	return node
}

// treeWrite writes an outcome into tree.json for the ledger
// (ledger.TreeWrite): the tree it was applied to, encoded to a
// temporary file, renamed over tree.json unless a person changed the
// file since it was read; then the outcome is applied again to their
// version, so that their edit is kept. It tries a few times; a file
// rewritten faster than that gets the last version applied to.
type treeWrite struct {
	r      *worker
	ctx    context.Context
	meta   *state.Meta
	msg    *executor.Message
	t      *tree.Tree
	loaded fileSum // what t was read from

	data []byte
	rep  *fsutil.Replacement
}

func (w *treeWrite) Prepare() error {
	var err error
	w.data, w.rep, err = tree.PrepareSave(w.r.p.Tree(), w.t)
	return err
}

func (w *treeWrite) Abort() {
	if w.rep != nil {
		w.rep.Abort()
	}
}

func (w *treeWrite) Commit() (metaChanged bool, err error) {
	r, meta := w.r, w.meta
	out, status, attempts := meta.Outcome, meta.NodeStatus, meta.Attempts
	for try := 0; try < 5 && sumFile(r.p.Tree()) != w.loaded; try++ {
		w.rep.Abort()
		r.log.Info("tree.json changed while the outcome was being recorded; applying it to the new version", "iteration", meta.Iteration)
		next, err := r.treeForRecord(w.ctx, meta.Iteration)
		if err != nil {
			return false, err
		}
		w.t, w.loaded = next, r.cache.trees.sum
		if r.applyOutcome(w.t, meta, &w.msg) == nil || meta.Outcome != out {
			// Removed meanwhile, or its children no longer fit: what
			// meta.json says about the node stands for the journal.
			r.log.Warn("the outcome could not be applied as recorded to the edited tree.json", "iteration", meta.Iteration, "node", meta.Node, "note", meta.Note)
		}
		if w.data, w.rep, err = tree.PrepareSave(r.p.Tree(), w.t); err != nil {
			return false, err
		}
	}
	if err := w.rep.Commit(fsutil.Durable); err != nil {
		return false, err
	}
	r.cache.trees.remember(w.data, w.t)
	return meta.Outcome != out || meta.NodeStatus != status || meta.Attempts != attempts, nil
}

// readMessage returns the agent's message: the copy in meta.json, or for
// a meta.json written without one, output.json.
func readMessage(runDir string, meta *state.Meta) (*executor.Message, error) {
	if len(meta.Message) > 0 {
		m, err := executor.ParseMessage(meta.Message)
		if err != nil {
			return nil, fmt.Errorf("parse the message in %s: %w", state.MetaFile(runDir), err)
		}
		return m, nil
	}
	path := filepath.Join(runDir, "output.json")
	data, err := fsutil.ReadLimited(path, 16<<20, true)
	if err != nil {
		return nil, fmt.Errorf("read the agent's message: %w", err)
	}
	m, err := executor.ParseMessage(data)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return m, nil
}

// executorSummary is what the next attempt's history.md says of an
// iteration that ended in an executor error.
func executorSummary(meta *state.Meta) string {
	if meta.Agent == nil {
		return "the agent did not run"
	}
	var b strings.Builder
	b.WriteString("The previous attempt failed in the executor: ")
	switch {
	case meta.Agent.Error != "":
		b.WriteString(meta.Agent.Error)
	case meta.Agent.MessageError != "":
		b.WriteString(meta.Agent.MessageError)
	case meta.Agent.Class == executor.ClassOK:
		b.WriteString("the final message did not have a usable status")
	default:
		b.WriteString(meta.Agent.Class)
	}
	if meta.Summary != "" {
		b.WriteString("\n\nThe agent's own summary: " + meta.Summary)
	}
	if meta.Agent.LogTail != "" && !strings.Contains(b.String(), meta.Agent.LogTail) {
		b.WriteString("\n\nLast lines of the agent's output:\n" + meta.Agent.LogTail)
	}
	return b.String()
}

// progress prints the one line a user sees per iteration. meta.json is
// shared with the agent, so what it says is escaped.
func (r *worker) progress(m *state.Meta) {
	agent := m.AgentStatus
	if (agent == "" || m.Outcome == state.OutcomeExecutorError) && m.Agent != nil {
		agent = m.Agent.Class
	}
	if m.Outcome == state.OutcomeInterrupted {
		agent = "interrupted"
	}
	next := m.NodeStatus
	if next == "" {
		next = "removed"
	}
	switch {
	case next == string(tree.StatusOpen) && m.NoAttempt && m.Worker != "":
		next = "open, no attempt spent (its worker failed before the agent started)"
	case next == string(tree.StatusOpen) && m.NoAttempt:
		next = "open, no attempt spent (the runner died)"
	case next == string(tree.StatusOpen):
		next = fmt.Sprintf("open, attempt %d of %d used", m.Attempts, m.MaxAttempts)
	}
	switch {
	case m.NoChange && m.Outcome == state.OutcomeDone:
		next += ", but nothing changed"
	case m.CommandsFailed && m.Outcome == state.OutcomeDone:
		next += ", but every command the agent ran failed"
	}
	guard := m.Guard
	if c := m.Conflict; c != nil {
		// The task's own guards passed; landing it did not.
		guard = "conflict"
		if c.Kind == "guards" {
			guard = "fail on the run branch"
		}
	}
	dur := time.Duration(m.DurationMS) * time.Millisecond
	review := ""
	if m.Review != nil && m.Review.Verdict != "" {
		review = "review: " + inert.Line(m.Review.Verdict) + " "
	}
	line := fmt.Sprintf("#%d %-24s agent: %-10s guards: %-7s %s→ %s (%s)",
		m.Iteration, inert.Line(m.NodePath), inert.Line(agent), inert.Line(guard), review, inert.Line(next), dur.Round(100*time.Millisecond))
	if r.opts.Live != nil {
		line = r.opts.Live.Paint(toneOf(m), line)
	}
	fmt.Fprintln(r.out, line)
}

// toneOf is the colour of an iteration's progress line on a terminal: a
// task blocked (by its agent, or out of attempts) or a done that did
// nothing asks for the person (yellow); a failed attempt, an agent error,
// a rejection or a conflict with the run branch is red; a task done,
// green; a retry asked for, a split or an interruption, no colour.
func toneOf(m *state.Meta) live.Tone {
	switch {
	case m.NodeStatus == string(tree.StatusBlocked) || m.Outcome == state.OutcomeBlocked:
		return live.Attention
	case m.Conflict != nil:
		return live.Bad
	case m.Outcome == state.OutcomeDone && (m.NoChange || m.CommandsFailed):
		return live.Attention
	case m.Outcome == state.OutcomeDone:
		return live.Good
	case m.Outcome == state.OutcomeGuardFailed || m.Outcome == state.OutcomeExecutorError || m.Outcome == state.OutcomeRejected:
		return live.Bad
	}
	return live.Plain
}

// checkpoint records a decided outcome in git before the ledger records
// it (runbranch.Tree.Record). Without checkpoints the working tree as a
// task that is done left it is the next task's start.
func (r *worker) checkpoint(ctx context.Context, meta *state.Meta, title string) error {
	if r.ck == nil {
		if meta.Outcome == state.OutcomeDone {
			r.followBaseline(meta, "", state.WorktreeBaseline, r.p.RunDir(meta.Iteration))
		}
		return nil
	}
	return r.ck.Record(ctx, r.cfg, meta, title)
}
