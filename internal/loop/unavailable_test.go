package loop

import (
	"context"
	"errors"
	"strings"
	"testing"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/state"
)

// TestUnavailableAgentStopsAtOnce: an agent that is not logged in fails
// every attempt the same way; the run stops at its first answer, spends
// no attempt, and says what the agent said and what to do.
func TestUnavailableAgentStopsAtOnce(t *testing.T) {
	p := agentRepo(t, countingAgent(`*) echo "Error: Not logged in. Please run codex login." >&2; exit 1;;`), "max_attempts = 2\n")
	_, err := runBounded(t, context.Background(), p, &syncBuffer{})
	ue, ok := errors.AsType[*executor.UnavailableError](err)
	if !ok {
		t.Fatalf("err = %v, want the agent unavailable", err)
	}
	if ue.Kind != executor.UnavailableAuth || !strings.Contains(err.Error(), "stderr: Error: Not logged in. Please run codex login.") ||
		!strings.Contains(err.Error(), "To go on: give the agent valid credentials") {
		t.Errorf("err = %v", err)
	}
	if n := nodeOf(t, p, "a"); n.Attempts != 0 || n.Status != "" {
		t.Errorf("task a: %s, %d attempts; want open, none spent", n.Status, n.Attempts)
	}
	m := loadMeta(t, p, 1)
	if m.Phase != state.PhaseAborted || m.Agent == nil || m.Agent.Class != executor.ClassUnavailable {
		t.Errorf("meta: phase %s, agent %+v", m.Phase, m.Agent)
	}
	if got := events(t, p, state.EventAborted); len(got) != 1 {
		t.Errorf("aborted records %+v", got)
	}
	if rs := loadRunState(t, p); rs.ConsecutiveErrors != 0 || rs.InFlight != nil {
		t.Errorf("run state: consecutive errors %d, in flight %+v", rs.ConsecutiveErrors, rs.InFlight)
	}
}
