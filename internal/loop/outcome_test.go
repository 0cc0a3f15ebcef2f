package loop

import (
	"testing"
	"time"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/state"
)

// TestOutcomeTable checks the mapping of SPEC §6: what the agent said and
// what the guards found, to an outcome, and which outcomes spend an attempt.
func TestOutcomeTable(t *testing.T) {
	ok := &state.AgentMeta{Class: executor.ClassOK}
	failed := &state.AgentMeta{Class: executor.ClassAgentError}
	tests := []struct {
		name    string
		meta    state.Meta
		want    string
		attempt bool
	}{
		{"done, guards pass", state.Meta{Agent: ok, AgentStatus: "done", Guard: state.GuardPass}, state.OutcomeDone, false},
		{"done, no guards", state.Meta{Agent: ok, AgentStatus: "done", Guard: state.GuardSkipped}, state.OutcomeDone, false},
		{"done, a guard fails", state.Meta{Agent: ok, AgentStatus: "done", Guard: state.GuardFail}, state.OutcomeGuardFailed, true},
		{"retry", state.Meta{Agent: ok, AgentStatus: "retry"}, state.OutcomeRetry, true},
		{"blocked", state.Meta{Agent: ok, AgentStatus: "blocked"}, state.OutcomeBlocked, false},
		{"decomposed", state.Meta{Agent: ok, AgentStatus: "decomposed"}, state.OutcomeDecomposed, false},
		{"agent error with a done message", state.Meta{Agent: failed, AgentStatus: "done"}, state.OutcomeExecutorError, true},
		{"no message", state.Meta{Agent: ok}, state.OutcomeExecutorError, true},
		{"agent never ran", state.Meta{}, state.OutcomeExecutorError, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := outcome(&tt.meta)
			if got != tt.want {
				t.Fatalf("outcome = %q, want %q", got, tt.want)
			}
			if countsAsAttempt(got) != tt.attempt {
				t.Fatalf("countsAsAttempt(%q) = %v, want %v", got, !tt.attempt, tt.attempt)
			}
		})
	}
	if !countsAsAttempt(state.OutcomeInterrupted) {
		t.Fatal("an interrupted iteration must count as an attempt")
	}
}

func TestInjectionID(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 20; i++ { // 24 random bits: a repeat among 20 is a 1-in-80,000 event
		id := injectionID(fixedTime)
		if len(id) != len("INJ-20261122-071500-a1b2c3") || id[:20] != "INJ-20261122-071500-" {
			t.Fatalf("bad injection id %q", id)
		}
		if seen[id] {
			t.Fatalf("injection id %q repeated", id)
		}
		seen[id] = true
	}
}

var fixedTime = mustTime("2026-11-22T07:15:00Z")

func mustTime(s string) (t time.Time) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}
