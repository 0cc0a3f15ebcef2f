package loop

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/ledger"
	"github.com/runner-cli/runner/internal/live"
	"github.com/runner-cli/runner/internal/outcome"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/review"
	"github.com/runner-cli/runner/internal/runbranch"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
	"github.com/runner-cli/runner/internal/tree"
)

// record decides a finished iteration's outcome (package outcome), applies
// it to the tree, records it in git in its lane's working tree
// (runbranch.Tree.Record), and has the ledger record it. Everything written is an
// absolute value computed from meta, so recording the same iteration
// twice (after a crash in the middle of recording) gives the same result.
func (r *Runner) record(ctx context.Context, l lane.Lane, meta *state.Meta) error {
	r.stopEscapedAgent(meta.Iteration)
	defer r.env.Rooms.RemoveTempDir(meta.Iteration)
	defer r.cache.prompts.forget(meta.Iteration)
	defer r.iterationEnded(meta.Iteration)
	meta.Outcome = outcomeOf(meta)
	var msg *executor.Message
	if meta.Outcome != state.OutcomeExecutorError && meta.Outcome != state.OutcomeInterrupted && meta.Outcome != state.OutcomeCostCap {
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
	if err := r.checkpoint(gitCtx, l.Here().Tree(), meta, title); err != nil {
		return err
	}

	rec := ledger.Outcome{Meta: meta, LastStatus: outcome.LastStatus(meta.Outcome, meta.AgentStatus), LastSummary: meta.Summary}
	switch meta.Outcome {
	case state.OutcomeExecutorError:
		rec.LastSummary = executorSummary(meta)
	case state.OutcomeCostCap:
		rec.LastSummary = costCapSummary(meta)
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
	r.progress(l.Here().Out(), meta)
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
		Review:      review.Verdict(meta),
		Tampered:    len(meta.Tamper) > 0,
		Conflicted:  meta.Conflict != nil,
		CostCapped:  meta.CostCap != nil,
	})
}

// recordInterrupted records an iteration whose agent was working when it
// was cut short: it counts as an attempt, and the retry is told the
// working tree may hold partial changes.
func (r *Runner) recordInterrupted(ctx context.Context, l lane.Lane, meta *state.Meta, why string) error {
	meta.Outcome = state.OutcomeInterrupted
	meta.AgentStatus = ""
	meta.Guard = state.GuardSkipped
	meta.Summary = fmt.Sprintf("Iteration %d was interrupted before it finished (%s). The working tree may hold partial changes from that attempt: check `git status` and `git diff` before building on them.", meta.Iteration, why)
	if meta.Agent != nil && meta.Agent.LogTail != "" {
		meta.Summary += "\n\nLast lines of the agent's output:\n" + meta.Agent.LogTail
	}
	return r.record(ctx, l, meta)
}

// applyOutcome applies meta's outcome to t: a decomposition's children,
// then the node's runner-owned fields (outcome.Apply), and notes the
// result in meta. Children that do not fit the tree (an id already used,
// say) make the message invalid: the outcome becomes an executor error,
// which the next attempt is told about, and *msg is cleared. It returns
// the node, or nil when it was removed from the tree.
func (r *Runner) applyOutcome(t *tree.Tree, meta *state.Meta, msg **executor.Message) *tree.Node {
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
	f = review.AfterRejection(r.cfg, meta, f)
	if node.IsLeaf() {
		// Its spend is booked: a task over its cap goes no further.
		f = outcome.OverCap(f, r.overCap(tree.NewIndex(t), node))
	}
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
	r      *Runner
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

// progress prints on out the one line a user sees per iteration
// (live.Line), in its colour on a terminal.
func (r *Runner) progress(out io.Writer, m *state.Meta) {
	line := live.Line(m)
	if r.opts.Live != nil {
		line = r.opts.Live.Paint(live.ToneOf(m), line)
	}
	fmt.Fprintln(out, line)
}

// checkpoint records a decided outcome in git in the working tree ck
// before the ledger records it (runbranch.Tree.Record). Without
// checkpoints the working tree as a task that is done left it is the
// next task's start.
func (r *Runner) checkpoint(ctx context.Context, ck *runbranch.Tree, meta *state.Meta, title string) error {
	if ck == nil {
		if meta.Outcome == state.OutcomeDone {
			r.followBaseline(meta, "", state.WorktreeBaseline, r.p.RunDir(meta.Iteration))
		}
		return nil
	}
	return ck.Record(ctx, r.cfg, meta, title)
}

// stopEscapedAgent stops what is left of iteration n's agent when the
// iteration is recorded (lane.StopEscaped): only processes started since
// its agent did need a look; a runner resuming the iteration knows no
// such point and looks at all.
func (r *Runner) stopEscapedAgent(n int) {
	var since proc.PIDMark
	if r.cache.agentIteration == n {
		since = r.cache.agentMark
	}
	lane.StopEscaped(r.p, n, since, r.cfg.Executor.KillGrace.Duration, r.log)
}
