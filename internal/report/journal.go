package report

import (
	"github.com/runner-cli/runner/internal/state"
)

// fromJournal rebuilds what the journal says of iteration n, for an
// iteration whose meta.json is gone.
func fromJournal(n int, recs []state.Record) *state.Meta {
	m := &state.Meta{Iteration: n}
	for _, r := range recs {
		if r.Node != "" {
			m.Node = r.Node
		}
		if r.Executor != "" {
			m.Executor = r.Executor
		}
		switch r.Event {
		case state.EventStarted:
			m.Phase, m.StartedAt = state.PhaseStarted, r.Time
		case state.EventAgentDone:
			m.Phase, m.AgentStatus, m.Usage = state.PhaseAgentDone, r.AgentStatus, r.Usage
			if r.AgentClass != "" || r.Error != "" {
				m.Agent = &state.AgentMeta{Class: r.AgentClass, Error: r.Error, Evidence: r.Evidence}
			}
		case state.EventGuardsDone:
			m.Phase, m.Guard = state.PhaseGuardsDone, r.Guard
		case state.EventRecorded, state.EventInterrupted:
			m.Phase, m.Outcome, m.NodeStatus, m.Summary, m.Attempts = state.PhaseRecorded, r.Outcome, r.NodeStatus, r.Summary, r.Attempts
			m.Guard = or(r.Guard, m.Guard)
		case state.EventAborted:
			m.Phase, m.Note = state.PhaseAborted, r.Error
			if r.Usage != nil {
				m.Usage = r.Usage
			}
		case state.EventRateLimited:
			if m.Phase == "" {
				m.Phase = state.PhaseWaiting
			}
		}
	}
	return m
}
