package ledger

import "github.com/runner-cli/runner/internal/state"

// The run branch's way back to its base (SPEC §23): the base recorded
// when the run branch is made, and how `runner finish` ended the run.
// Like Checkpoint, they reach run_state.json with the next save of the
// run state (Flush at the latest).

// SetBase records the base of the run branch.
func (l *Ledger) SetBase(branch string) {
	if l.rs.Base != branch {
		l.rs.Base = branch
		l.stateDirty = true
	}
}

// SetFinished records how `runner finish` ended the run; nil clears it
// (a run started again).
func (l *Ledger) SetFinished(f *state.Finished) {
	if l.rs.Finished != nil || f != nil {
		l.rs.Finished = f
		l.stateDirty = true
	}
}
