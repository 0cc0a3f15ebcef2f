package live

import (
	"fmt"
	"time"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// Line is the one line a person sees of what came of an iteration, m its
// record. meta.json is shared with the agent, so what it says is
// escaped.
func Line(m *state.Meta) string {
	agent := m.AgentStatus
	if (agent == "" || m.Outcome == state.OutcomeExecutorError) && m.Agent != nil {
		agent = m.Agent.Class
	}
	if m.Outcome == state.OutcomeInterrupted {
		agent = "interrupted"
	}
	if m.Outcome == state.OutcomeCostCap {
		agent = "cost_cap"
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
	if h := m.CostCap; h != nil {
		who := ""
		if h.By == "reviewer" {
			who = " (the reviewer)"
		}
		next += fmt.Sprintf(", stopped%s at the %s cap %s: %s of %s", who, h.Scope, h.Key, state.UsedAmount(h.Unit, h.Used, h.Cap), state.Amount(h.Unit, h.Cap))
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
	return fmt.Sprintf("#%d %-24s agent: %-10s guards: %-7s %s→ %s (%s)",
		m.Iteration, inert.Line(m.NodePath), inert.Line(agent), inert.Line(guard), review, inert.Line(next), dur.Round(100*time.Millisecond))
}

// ToneOf is the colour of an iteration's Line on a terminal: a
// task blocked (by its agent, or out of attempts) or a done that did
// nothing asks for the person (yellow); a failed attempt, an agent error,
// a rejection or a conflict with the run branch is red; a task done,
// green; a retry asked for, a split or an interruption, no colour.
func ToneOf(m *state.Meta) Tone {
	switch {
	case m.NodeStatus == string(tree.StatusBlocked) || m.Outcome == state.OutcomeBlocked:
		return Attention
	case m.Conflict != nil:
		return Bad
	case m.Outcome == state.OutcomeDone && (m.NoChange || m.CommandsFailed):
		return Attention
	case m.Outcome == state.OutcomeDone:
		return Good
	case m.Outcome == state.OutcomeGuardFailed || m.Outcome == state.OutcomeExecutorError || m.Outcome == state.OutcomeRejected ||
		m.Outcome == state.OutcomeCostCap:
		return Bad
	}
	return Plain
}
