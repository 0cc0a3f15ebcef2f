package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// Values of run_state.last_status beyond the agent's own statuses.
const (
	LastStatusError       = "error"
	LastStatusInterrupted = "interrupted"
)

// outcome maps what the agent said and what the guards found to one of
// the outcomes of SPEC §6.
func outcome(m *state.Meta) string {
	if m.Agent == nil || m.Agent.Class != executor.ClassOK || m.AgentStatus == "" {
		return state.OutcomeExecutorError
	}
	switch m.AgentStatus {
	case "done":
		if m.Guard == state.GuardFail {
			return state.OutcomeGuardFailed
		}
		return state.OutcomeDone
	case "retry":
		return state.OutcomeRetry
	case "blocked":
		return state.OutcomeBlocked
	case "decomposed":
		return state.OutcomeDecomposed
	}
	return state.OutcomeExecutorError
}

// countsAsAttempt reports whether an outcome spends one of the node's attempts.
func countsAsAttempt(outcome string) bool {
	switch outcome {
	case state.OutcomeGuardFailed, state.OutcomeRetry, state.OutcomeExecutorError, state.OutcomeInterrupted:
		return true
	}
	return false
}

// record applies a finished iteration to the tree and the state files.
// Every change is written as an absolute value computed from meta, so
// recording the same iteration twice (after a crash in the middle of
// recording) gives the same result.
func (r *Runner) record(meta *state.Meta) error {
	runDir := r.p.RunDir(meta.Iteration)
	out := outcome(meta)
	if meta.Outcome == state.OutcomeInterrupted {
		out = state.OutcomeInterrupted
	}
	meta.Outcome = out
	var msg *executor.Message
	if out != state.OutcomeExecutorError && out != state.OutcomeInterrupted {
		m, err := readMessage(runDir)
		if err != nil {
			return err
		}
		msg = m
	}

	t, err := r.loadTree()
	if err != nil {
		return fmt.Errorf("record iteration %d: %w; the iteration stays in flight and is recorded once the tree is fixed", meta.Iteration, err)
	}
	ix := tree.NewIndex(t)
	node := ix.Node(meta.Node)
	if node != nil && out == state.OutcomeDecomposed && len(node.Children) == 0 {
		// Children that do not fit the tree (an id already used, say) make
		// the message invalid: an executor error the next attempt is told about.
		if err := t.AddChildren(ix, node.ID, msg.Children); err != nil {
			out = state.OutcomeExecutorError
			meta.Outcome = out
			meta.Agent.Class = executor.ClassAgentError
			meta.Agent.Error = "invalid decomposition: " + err.Error()
			msg = nil
		} else {
			ix = tree.NewIndex(t)
		}
	}
	if node == nil {
		meta.Note = fmt.Sprintf("node %s was removed from the tree during the iteration; outcome not applied", meta.Node)
		r.log.Warn(meta.Note)
	} else {
		r.apply(node, meta, msg)
		t.Normalize()
		if err := tree.Save(r.p.Tree(), t); err != nil {
			return err
		}
		meta.NodeStatus = string(node.EffectiveStatus())
		meta.Attempts = node.Attempts
	}

	if msg != nil {
		if err := r.appendNotesOnce(r.p.Assumptions(), "Assumptions", meta, msg.Assumptions); err != nil {
			return err
		}
		questions := msg.Questions
		if out == state.OutcomeBlocked {
			questions = append([]string{"blocked: " + msg.Summary}, questions...)
		}
		if err := r.appendNotesOnce(r.p.Questions(), "Open Questions", meta, questions); err != nil {
			return err
		}
	}

	r.rs.Iteration = meta.Iteration
	r.rs.LastNode = meta.Node
	r.rs.LastGuard = meta.Guard
	if r.rs.LastGuard == "" {
		r.rs.LastGuard = state.GuardSkipped
	}
	switch out {
	case state.OutcomeExecutorError:
		r.rs.LastStatus = LastStatusError
		r.rs.LastSummary = executorSummary(meta)
	case state.OutcomeInterrupted:
		r.rs.LastStatus = LastStatusInterrupted
		r.rs.LastSummary = meta.Summary
	default:
		r.rs.LastStatus = meta.AgentStatus
		r.rs.LastSummary = meta.Summary
	}
	r.rs.InFlight = nil
	if err := state.SaveRunState(r.p.RunState(), r.rs); err != nil {
		return err
	}

	finished := time.Now().UTC()
	meta.FinishedAt = &finished
	meta.DurationMS = finished.Sub(meta.StartedAt).Milliseconds()
	meta.Phase = state.PhaseRecorded
	if err := state.SaveMeta(runDir, meta); err != nil {
		return err
	}
	event := state.EventRecorded
	if out == state.OutcomeInterrupted {
		event = state.EventInterrupted
	}
	if err := r.journal(state.Record{Iteration: meta.Iteration, Node: meta.Node, Event: event, AgentStatus: meta.AgentStatus,
		Guard: meta.Guard, Outcome: out, NodeStatus: meta.NodeStatus, Attempts: meta.Attempts,
		Summary: oneLine(r.rs.LastSummary, 300)}); err != nil {
		return err
	}
	r.progress(meta)
	return nil
}

// apply changes node as the outcome table of SPEC §6 says.
func (r *Runner) apply(node *tree.Node, meta *state.Meta, msg *executor.Message) {
	switch meta.Outcome {
	case state.OutcomeDone:
		node.Status = tree.StatusDone
		node.BlockedReason = ""
	case state.OutcomeBlocked:
		node.Status = tree.StatusBlocked
		node.BlockedReason = oneLine(msg.Summary, 500)
	}
	if countsAsAttempt(meta.Outcome) {
		node.Attempts = meta.Attempt
		if node.Attempts >= node.AttemptLimit(r.cfg.Loop.MaxAttempts) {
			node.Status = tree.StatusBlocked
			node.BlockedReason = "attempts exhausted"
		}
	}
}

// appendNotesOnce appends items unless this iteration's entries are
// already in the file (a crash between appending and recording).
func (r *Runner) appendNotesOnce(path, heading string, meta *state.Meta, items []string) error {
	if len(items) == 0 {
		return nil
	}
	if r.resuming {
		if data, err := os.ReadFile(path); err == nil &&
			strings.Contains(string(data), fmt.Sprintf("[iteration %d, node %s]", meta.Iteration, meta.Node)) {
			return nil
		}
	}
	return state.AppendNotes(path, heading, meta.Iteration, meta.Node, items)
}

func readMessage(runDir string) (*executor.Message, error) {
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

// recordInterrupted records an iteration that did not get to finish: it
// counts as an attempt, and the retry is told the working tree may hold
// partial changes.
func (r *Runner) recordInterrupted(meta *state.Meta, why string) error {
	meta.Outcome = state.OutcomeInterrupted
	meta.AgentStatus = ""
	meta.Guard = state.GuardSkipped
	meta.Summary = fmt.Sprintf("Iteration %d was interrupted before it finished (%s). The working tree may hold partial changes from that attempt: check `git status` and `git diff` before building on them.", meta.Iteration, why)
	if meta.Agent != nil && meta.Agent.LogTail != "" {
		meta.Summary += "\n\nLast lines of the agent's output:\n" + meta.Agent.LogTail
	}
	return r.record(meta)
}

// resume resolves the iteration a previous runner left in flight, by the
// phase it had reached.
func (r *Runner) resume(ctx context.Context) error {
	in := r.rs.InFlight
	r.resuming = true
	defer func() { r.resuming = false }()
	r.killLeftoverAgent(in)
	runDir := r.p.RunDir(in.Iteration)
	meta, err := state.LoadMeta(runDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("resume iteration %d: %w", in.Iteration, err)
	}
	if meta == nil {
		// The runner died before the run folder was complete.
		if err := os.MkdirAll(runDir, 0o755); err != nil {
			return err
		}
		meta = &state.Meta{Iteration: in.Iteration, Node: in.Node, NodePath: in.Node, StartedAt: in.StartedAt, Phase: state.PhaseStarted}
		if t, err := r.loadTree(); err == nil {
			ix := tree.NewIndex(t)
			if n := ix.Node(in.Node); n != nil {
				meta.NodePath = ix.Path(n.ID)
				meta.Attempt = n.Attempts + 1
				meta.MaxAttempts = n.AttemptLimit(r.cfg.Loop.MaxAttempts)
			}
		}
	}
	switch in.Phase {
	case state.PhaseGuardsDone:
		r.log.Info("recording the results of an iteration a previous runner finished", "iteration", in.Iteration, "node", in.Node)
		meta.Phase = state.PhaseGuardsDone
		return r.record(meta)
	case state.PhaseAgentDone:
		r.log.Info("running the guards of an iteration a previous runner left", "iteration", in.Iteration, "node", in.Node)
		meta.Phase = state.PhaseAgentDone
		return r.finish(ctx, meta)
	default:
		r.log.Warn("the previous runner was interrupted during an iteration; retrying its node", "iteration", in.Iteration, "node", in.Node, "runner_pid", in.RunnerPID)
		if meta.Agent == nil {
			meta.Agent = &state.AgentMeta{Class: "interrupted", LogTail: logTail(filepath.Join(runDir, "executor.log"))}
		}
		return r.recordInterrupted(meta, fmt.Sprintf("runner pid %d stopped during phase %q", in.RunnerPID, in.Phase))
	}
}

// logTail returns the last lines of a log file, bounded.
func logTail(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const max = 2048
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := st.Size() - max
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	n, _ := f.ReadAt(buf, off)
	lines := strings.Split(strings.TrimRight(string(buf[:n]), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// progress prints the one line a user sees per iteration.
func (r *Runner) progress(m *state.Meta) {
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
	if next == string(tree.StatusOpen) {
		next = fmt.Sprintf("open, attempt %d of %d used", m.Attempts, m.MaxAttempts)
	}
	dur := time.Duration(m.DurationMS) * time.Millisecond
	fmt.Fprintf(r.opts.Progress, "#%d %-24s agent: %-10s guards: %-7s → %s (%s)\n",
		m.Iteration, m.NodePath, agent, m.Guard, next, dur.Round(100*time.Millisecond))
}
