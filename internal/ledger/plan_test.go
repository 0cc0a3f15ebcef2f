package ledger

import (
	"os"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/state"
)

// TestPlanned checks how a planning run is recorded: its usage reaches
// run_state.json once, the journal gets a plan record, and the run leaves
// nothing in flight for a runner to resume, while its number is never
// given again.
func TestPlanned(t *testing.T) {
	p := state.NewPaths(t.TempDir())
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := Open(p, log.New(os.Stderr))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Load(); err != nil {
		t.Fatal(err)
	}
	n := l.NextIteration()
	if err := os.MkdirAll(p.RunDir(n), 0o755); err != nil {
		t.Fatal(err)
	}
	meta := &state.Meta{Iteration: n, NodePath: "(plan)", Phase: state.PhaseStarted, StartedAt: time.Now().UTC(), Plan: &state.PlanMeta{}}
	if err := l.SavePlan(meta); err != nil {
		t.Fatal(err)
	}
	meta.Phase, meta.Outcome, meta.AgentStatus = state.PhaseRecorded, state.OutcomePlanWritten, "decomposed"
	meta.Usage = &state.Usage{InputTokens: 100, OutputTokens: 7}
	if err := l.Planned(meta, "the plan"); err != nil {
		t.Fatal(err)
	}

	rs, err := state.LoadRunState(p.RunState())
	if err != nil {
		t.Fatal(err)
	}
	if rs.Usage.InputTokens != 100 || rs.Usage.OutputTokens != 7 || rs.InFlight != nil || rs.Iteration != 0 {
		t.Errorf("run state after a plan: %+v", rs)
	}
	recs, err := state.ReadJournal(p.Journal())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Event != state.EventPlan || recs[0].Iteration != n || recs[0].Outcome != state.OutcomePlanWritten ||
		recs[0].Summary != "the plan" || recs[0].Usage == nil {
		t.Errorf("journal after a plan: %+v", recs)
	}
	m, err := state.LoadMeta(p.RunDir(n))
	if err != nil || m.Outcome != state.OutcomePlanWritten || m.Plan == nil {
		t.Errorf("meta.json after a plan: %+v, %v", m, err)
	}
	if in, err := l.Left(); in != nil || err != nil {
		t.Errorf("a plan leaves %+v in flight (%v)", in, err)
	}
	if next := l.NextIteration(); next != n+1 {
		t.Errorf("the next iteration is %d, want %d (the plan's number is taken)", next, n+1)
	}
}
