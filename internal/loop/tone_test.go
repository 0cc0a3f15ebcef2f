package loop

import (
	"testing"

	"github.com/runner-cli/runner/internal/live"
	"github.com/runner-cli/runner/internal/state"
)

// TestToneOf: the colour of an iteration's progress line says what came
// of it: done green; a failed attempt, an agent error, a rejection or a
// conflict red; a blocked task (a question, or out of attempts) and an
// empty done yellow; a retry, a split or an interruption none.
func TestToneOf(t *testing.T) {
	for _, c := range []struct {
		name string
		m    state.Meta
		want live.Tone
	}{
		{"done", state.Meta{Outcome: state.OutcomeDone, NodeStatus: "done"}, live.Good},
		{"empty done", state.Meta{Outcome: state.OutcomeDone, NodeStatus: "done", NoChange: true}, live.Attention},
		{"done, every command failed", state.Meta{Outcome: state.OutcomeDone, NodeStatus: "done", CommandsFailed: true}, live.Attention},
		{"guards failed", state.Meta{Outcome: state.OutcomeGuardFailed, NodeStatus: "open"}, live.Bad},
		{"agent error", state.Meta{Outcome: state.OutcomeExecutorError, NodeStatus: "open"}, live.Bad},
		{"rejected", state.Meta{Outcome: state.OutcomeRejected, NodeStatus: "open"}, live.Bad},
		{"conflict", state.Meta{Outcome: state.OutcomeGuardFailed, NodeStatus: "open", Conflict: &state.ConflictMeta{Kind: "conflict"}}, live.Bad},
		{"a question", state.Meta{Outcome: state.OutcomeBlocked, NodeStatus: "blocked"}, live.Attention},
		{"out of attempts", state.Meta{Outcome: state.OutcomeGuardFailed, NodeStatus: "blocked"}, live.Attention},
		{"retry", state.Meta{Outcome: state.OutcomeRetry, NodeStatus: "open"}, live.Plain},
		{"decomposed", state.Meta{Outcome: state.OutcomeDecomposed, NodeStatus: "open"}, live.Plain},
		{"interrupted", state.Meta{Outcome: state.OutcomeInterrupted, NodeStatus: "open"}, live.Plain},
	} {
		if got := toneOf(&c.m); got != c.want {
			t.Errorf("%s: tone %d, want %d", c.name, got, c.want)
		}
	}
}
