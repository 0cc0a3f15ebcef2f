package ledger

import (
	"encoding/json"
	"io"
	"os"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/state"
)

// TestLeftFromJournalStaysLeft: an iteration only the journal knows of
// (its runner died before run_state.json got the marker) is recorded by
// the next runner, which dies before it saves its run state. The
// iteration must still be left for the runner after it, which records it
// again: the journal already ends it, so only run_state.json can say so,
// and only run_state.json holds what recording it changed (the task's
// attempts, the death it notes).
func TestLeftFromJournalStaysLeft(t *testing.T) {
	p := scratchPaths(t)
	if err := os.MkdirAll(p.RunDir(1), 0o755); err != nil {
		t.Fatal(err)
	}
	// The dead runner's started record, and a run state that never got
	// its marker.
	started, _ := json.Marshal(state.Record{Time: time.Now().UTC(), Iteration: 1, Node: "a", Event: state.EventStarted, RunnerPID: 4242})
	write(t, p.Journal(), string(started)+"\n")
	if err := state.SaveRunState(p.RunState(), &state.RunState{Owned: map[string]state.Owned{"a": {}}}); err != nil {
		t.Fatal(err)
	}

	l := openLoaded(t, p)
	in, err := l.Left()
	if err != nil || in == nil || in.Iteration != 1 {
		t.Fatalf("Left() = %+v, %v; want iteration 1 from the journal", in, err)
	}
	// Recorded as interrupted, an attempt spent: everything but the run
	// state's save, which the runner dies before.
	l.Resume(true)
	l.Own("a", "", 1, "")
	l.Death(in.RunnerPID, in.RunnerLife, "a")
	meta := &state.Meta{Iteration: 1, Node: "a", Attempt: 1, Attempts: 1, Outcome: state.OutcomeInterrupted, RunnerDied: in.RunnerPID, RunnerDiedLife: in.RunnerLife, StartedAt: in.StartedAt}
	if err := l.Record(Outcome{Meta: meta, LastStatus: "interrupted"}); err != nil {
		t.Fatal(err)
	}
	l.Resume(false)

	rs, err := state.LoadRunState(p.RunState())
	if err != nil {
		t.Fatal(err)
	}
	unfinished, err := state.UnfinishedStarts(p.Journal(), rs.LastKnown())
	if err != nil {
		t.Fatal(err)
	}
	if rs.Flight(1) == nil && len(unfinished) == 0 {
		t.Errorf("after a crash while iteration 1 was recorded, nothing is left to record it again: run_state.json has no marker "+
			"(in flight %+v) and the journal ends it; the task's attempts and the death noted are lost (owned %+v, deaths %+v)",
			rs.InFlight, rs.Owned, rs.Deaths)
	}
}

// openLoaded opens the ledger of p and loads its run state, as a runner
// starting there does; it is closed when the test ends.
func openLoaded(t *testing.T, p state.Paths) *Ledger {
	t.Helper()
	l, err := Open(p, log.New(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	if err := l.Load(); err != nil {
		t.Fatal(err)
	}
	return l
}
