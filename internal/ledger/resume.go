package ledger

import (
	"errors"
	"fmt"
	"os"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

// Left returns an iteration a previous runner left in flight, nil when
// there is none: the earliest run_state.json names, else one only the
// journal knows of — a started record with nothing ending it, for an
// iteration after every one the run state knows (the runner died after
// making the record durable and before run_state.json got the marker;
// with parallel slots there may be several). Resolve it, Flush, and ask
// again until nil.
//
// The markers of iterations only the journal knows of are written to
// run_state.json, durably, before Left returns one of them. Resolving an
// iteration ends it in the journal before the run state it changed (the
// task's runner-owned fields, the death it notes) is saved (Record):
// without the marker on disk, a runner killed in between would leave the
// iteration ended in the journal, unknown to run_state.json and never
// recorded again, and the next runner would set tree.json back to the
// run state's older values of its task.
func (l *Ledger) Left() (*state.InFlight, error) {
	if f := l.rs.Flights(); len(f) > 0 {
		return f[0], nil
	}
	recs, err := state.UnfinishedStarts(l.p.Journal(), l.rs.LastKnown())
	if err != nil {
		return nil, fmt.Errorf("look for an unfinished iteration: %w", err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	for _, rec := range recs {
		l.rs.AddFlight(&state.InFlight{Iteration: rec.Iteration, Node: rec.Node, Phase: state.PhaseStarted, RunnerPID: rec.RunnerPID, RunnerLife: rec.RunnerLife, StartedAt: rec.Time, Slot: rec.Slot, Executor: rec.Executor})
	}
	if err := l.saveState(fsutil.Durable); err != nil {
		return nil, fmt.Errorf("note the iterations the journal says are unfinished in the run state: %w", err)
	}
	return l.rs.Flights()[0], nil
}

// Resume marks the start (true) and the end (false) of resolving an
// iteration a previous runner left: meanwhile its journal line and notes
// are written only if they are missing.
func (l *Ledger) Resume(on bool) { l.resuming = on }

// LoadMeta reads iteration n's meta.json; nil, nil when it has none.
func (l *Ledger) LoadMeta(n int) (*state.Meta, error) {
	m, err := state.LoadMeta(l.p.RunDir(n))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return m, err
}

// Rebuilt saves, durably, the meta.json of an iteration a runner died in
// before writing any, rebuilt from its marker and the tree: the attempt
// it was is then fixed, so that a crash while it is recorded cannot
// count it twice.
func (l *Ledger) Rebuilt(meta *state.Meta) error {
	if err := fsutil.MkdirAll(l.p.RunDir(meta.Iteration), 0o755); err != nil {
		return err
	}
	return state.SaveMeta(l.p.RunDir(meta.Iteration), meta)
}

// Vouched reports whether meta holds the verdict the runner recorded in
// the journal when the iteration's guards were done: a meta.json changed
// since (or a guards_done record that never reached the disk) is not a
// result, and its guards run again.
func (l *Ledger) Vouched(meta *state.Meta) bool {
	recs, err := state.ReadJournal(l.p.Journal())
	if err != nil {
		return false
	}
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if r.Iteration == meta.Iteration && r.Event == state.EventGuardsDone {
			return r.Digest != "" && r.Digest == state.VerdictDigest(meta)
		}
	}
	return false
}
