package outcome

import (
	"testing"

	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// TestOf is the table of SPEC §6: what the agent says and what the guards
// found make the outcome.
func TestOf(t *testing.T) {
	tests := []struct {
		it   Iteration
		want string
	}{
		{Iteration{AgentOK: true, AgentStatus: "done", Guard: state.GuardPass}, state.OutcomeDone},
		{Iteration{AgentOK: true, AgentStatus: "done", Guard: state.GuardSkipped}, state.OutcomeDone},
		{Iteration{AgentOK: true, AgentStatus: "done", Guard: state.GuardFail}, state.OutcomeGuardFailed},
		{Iteration{AgentOK: true, AgentStatus: "retry", Guard: state.GuardSkipped}, state.OutcomeRetry},
		{Iteration{AgentOK: true, AgentStatus: "blocked"}, state.OutcomeBlocked},
		{Iteration{AgentOK: true, AgentStatus: "decomposed"}, state.OutcomeDecomposed},
		{Iteration{AgentOK: true, AgentStatus: "finished"}, state.OutcomeExecutorError},
		{Iteration{AgentOK: true}, state.OutcomeExecutorError},
		{Iteration{AgentOK: false, AgentStatus: "done", Guard: state.GuardPass}, state.OutcomeExecutorError},
		{Iteration{AgentOK: true, AgentStatus: "done", Interrupted: true}, state.OutcomeInterrupted},
		{Iteration{Interrupted: true}, state.OutcomeInterrupted},
		{Iteration{AgentOK: true, AgentStatus: "done", Guard: state.GuardPass, Review: state.VerdictReject}, state.OutcomeRejected},
		{Iteration{AgentOK: true, AgentStatus: "done", Guard: state.GuardSkipped, Review: state.VerdictReject}, state.OutcomeRejected},
		{Iteration{AgentOK: true, AgentStatus: "done", Guard: state.GuardPass, Review: state.VerdictApprove}, state.OutcomeDone},
		{Iteration{AgentOK: true, AgentStatus: "done", Guard: state.GuardPass, Review: state.VerdictSkipped}, state.OutcomeDone},
		{Iteration{AgentOK: true, AgentStatus: "done", Guard: state.GuardFail, Review: state.VerdictReject}, state.OutcomeGuardFailed},
		{Iteration{AgentOK: true, AgentStatus: "retry", Tampered: true}, state.OutcomeGuardFailed},
		{Iteration{AgentOK: true, AgentStatus: "done", Guard: state.GuardPass, Review: state.VerdictApprove, Conflicted: true}, state.OutcomeGuardFailed},
		{Iteration{AgentOK: true, AgentStatus: "done", Guard: state.GuardPass, Conflicted: false}, state.OutcomeDone},
		{Iteration{AgentOK: true, AgentStatus: "blocked", Guard: state.GuardSkipped, Tampered: true}, state.OutcomeGuardFailed},
		{Iteration{AgentOK: false, Tampered: true}, state.OutcomeGuardFailed},
		{Iteration{AgentOK: true, AgentStatus: "done", Tampered: true, Interrupted: true}, state.OutcomeInterrupted},
	}
	for _, tt := range tests {
		if got := Of(tt.it); got != tt.want {
			t.Errorf("Of(%+v) = %s, want %s", tt.it, got, tt.want)
		}
	}
}

func TestCountsAsAttempt(t *testing.T) {
	for outcome, want := range map[string]bool{
		state.OutcomeDone: false, state.OutcomeBlocked: false, state.OutcomeDecomposed: false,
		state.OutcomeGuardFailed: true, state.OutcomeRetry: true, state.OutcomeExecutorError: true, state.OutcomeInterrupted: true,
		state.OutcomeRejected: true,
	} {
		if got := CountsAsAttempt(outcome); got != want {
			t.Errorf("CountsAsAttempt(%s) = %v, want %v", outcome, got, want)
		}
	}
}

// TestApply: the runner-owned fields after an outcome, attempts written as
// the absolute attempt number (applying twice changes nothing), and
// exhaustion.
func TestApply(t *testing.T) {
	open := Fields{}
	tests := []struct {
		name    string
		before  Fields
		outcome string
		attempt int
		want    Fields
	}{
		{"done", open, state.OutcomeDone, 1, Fields{Status: tree.StatusDone}},
		{"done after failures keeps the attempts", Fields{Attempts: 2}, state.OutcomeDone, 3, Fields{Status: tree.StatusDone, Attempts: 2}},
		{"guard failed", open, state.OutcomeGuardFailed, 1, Fields{Attempts: 1}},
		{"retry", Fields{Attempts: 1}, state.OutcomeRetry, 2, Fields{Attempts: 2}},
		{"executor error exhausts", Fields{Attempts: 2}, state.OutcomeExecutorError, 3, Fields{Status: tree.StatusBlocked, Attempts: 3, BlockedReason: ReasonExhausted}},
		{"interrupted counts", open, state.OutcomeInterrupted, 1, Fields{Attempts: 1}},
		{"blocked keeps attempts, says why", Fields{Attempts: 1}, state.OutcomeBlocked, 2, Fields{Status: tree.StatusBlocked, Attempts: 1, BlockedReason: "need the API key"}},
		{"decomposed changes nothing", Fields{Attempts: 1}, state.OutcomeDecomposed, 2, Fields{Attempts: 1}},
		{"applied twice", Fields{Attempts: 1}, state.OutcomeRetry, 1, Fields{Attempts: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Apply(tt.before, tt.outcome, tt.attempt, 3, "need\tthe  API\nkey")
			if got != tt.want {
				t.Errorf("Apply = %+v, want %+v", got, tt.want)
			}
			if again := Apply(got, tt.outcome, tt.attempt, 3, "need\tthe  API\nkey"); again != got && tt.outcome != state.OutcomeBlocked {
				t.Errorf("applied a second time: %+v, want %+v", again, got)
			}
		})
	}
}

// TestSettle: a person raising or lowering a limit opens or blocks a leaf.
func TestSettle(t *testing.T) {
	tests := []struct {
		f       Fields
		limit   int
		want    Fields
		changed bool
	}{
		{Fields{Attempts: 3}, 3, Fields{Status: tree.StatusBlocked, Attempts: 3, BlockedReason: ReasonExhausted}, true},
		{Fields{Status: tree.StatusOpen, Attempts: 4}, 3, Fields{Status: tree.StatusBlocked, Attempts: 4, BlockedReason: ReasonExhausted}, true},
		{Fields{Status: tree.StatusBlocked, Attempts: 3, BlockedReason: ReasonExhausted}, 5, Fields{Attempts: 3}, true},
		{Fields{Status: tree.StatusBlocked, Attempts: 3, BlockedReason: "a question"}, 5, Fields{Status: tree.StatusBlocked, Attempts: 3, BlockedReason: "a question"}, false},
		{Fields{Attempts: 2}, 3, Fields{Attempts: 2}, false},
		{Fields{Status: tree.StatusDone, Attempts: 5}, 3, Fields{Status: tree.StatusDone, Attempts: 5}, false},
	}
	for _, tt := range tests {
		got, changed := Settle(tt.f, tt.limit)
		if got != tt.want || changed != tt.changed {
			t.Errorf("Settle(%+v, %d) = %+v, %v; want %+v, %v", tt.f, tt.limit, got, changed, tt.want, tt.changed)
		}
	}
}

func TestLastStatus(t *testing.T) {
	if got := LastStatus(state.OutcomeExecutorError, "done"); got != LastStatusError {
		t.Errorf("executor error: %s", got)
	}
	if got := LastStatus(state.OutcomeInterrupted, ""); got != LastStatusInterrupted {
		t.Errorf("interrupted: %s", got)
	}
	if got := LastStatus(state.OutcomeGuardFailed, "done"); got != "done" {
		t.Errorf("guard failed: %s", got)
	}
}

// TestRejected: a rejection spends an attempt like a failing guard; the
// max_rejections-th blocks the task with the reasons, before exhaustion.
func TestRejected(t *testing.T) {
	reasons := []string{"the parser special-cases the test input", "no error for 1/0"}
	tests := []struct {
		name      string
		attempt   int
		limit     int
		rejection int
		want      Fields
	}{
		{"first of two", 1, 3, 1, Fields{Attempts: 1}},
		{"second of two", 2, 3, 2, Fields{Status: tree.StatusBlocked, Attempts: 2,
			BlockedReason: "the reviewer rejected it 2 times: the parser special-cases the test input; no error for 1/0"}},
		{"the limit of attempts too", 2, 2, 2, Fields{Status: tree.StatusBlocked, Attempts: 2,
			BlockedReason: "the reviewer rejected it 2 times: the parser special-cases the test input; no error for 1/0"}},
		{"attempts exhausted first", 2, 2, 1, Fields{Status: tree.StatusBlocked, Attempts: 2, BlockedReason: ReasonExhausted}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Apply(Fields{Attempts: tt.attempt - 1}, state.OutcomeRejected, tt.attempt, tt.limit, "done, says the agent")
			if got := Rejected(f, tt.rejection, 2, reasons); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := Rejected(Fields{Attempts: 1}, 1, 1, nil); got.BlockedReason != "the reviewer rejected it" {
		t.Errorf("one rejection without reasons: %+v", got)
	}
}
