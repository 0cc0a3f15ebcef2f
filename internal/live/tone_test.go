package live

import (
	"testing"

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
		want Tone
	}{
		{"done", state.Meta{Outcome: state.OutcomeDone, NodeStatus: "done"}, Good},
		{"empty done", state.Meta{Outcome: state.OutcomeDone, NodeStatus: "done", NoChange: true}, Attention},
		{"done, every command failed", state.Meta{Outcome: state.OutcomeDone, NodeStatus: "done", CommandsFailed: true}, Attention},
		{"guards failed", state.Meta{Outcome: state.OutcomeGuardFailed, NodeStatus: "open"}, Bad},
		{"agent error", state.Meta{Outcome: state.OutcomeExecutorError, NodeStatus: "open"}, Bad},
		{"rejected", state.Meta{Outcome: state.OutcomeRejected, NodeStatus: "open"}, Bad},
		{"conflict", state.Meta{Outcome: state.OutcomeGuardFailed, NodeStatus: "open", Conflict: &state.ConflictMeta{Kind: "conflict"}}, Bad},
		{"a question", state.Meta{Outcome: state.OutcomeBlocked, NodeStatus: "blocked"}, Attention},
		{"out of attempts", state.Meta{Outcome: state.OutcomeGuardFailed, NodeStatus: "blocked"}, Attention},
		{"retry", state.Meta{Outcome: state.OutcomeRetry, NodeStatus: "open"}, Plain},
		{"decomposed", state.Meta{Outcome: state.OutcomeDecomposed, NodeStatus: "open"}, Plain},
		{"interrupted", state.Meta{Outcome: state.OutcomeInterrupted, NodeStatus: "open"}, Plain},
	} {
		if got := ToneOf(&c.m); got != c.want {
			t.Errorf("%s: tone %d, want %d", c.name, got, c.want)
		}
	}
}
