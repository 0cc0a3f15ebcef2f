package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

// TestLoadRemovesTempsOfEveryIterationInFlight: a runner killed with
// several iterations under way (parallel slots) may have been writing in
// any of their run folders, and in their own folders (the review's);
// the next runner removes the temporary files it left there, also for an
// iteration only the journal knows.
func TestLoadRemovesTempsOfEveryIterationInFlight(t *testing.T) {
	p := scratchPaths(t)
	rs := &state.RunState{Iteration: 3}
	rs.AddFlight(&state.InFlight{Iteration: 4, Node: "a", Phase: state.PhaseGuardsDone, Slot: 1})
	rs.AddFlight(&state.InFlight{Iteration: 5, Node: "b", Phase: state.PhaseStarted, Slot: 2})
	if err := state.SaveRunState(p.RunState(), rs); err != nil {
		t.Fatal(err)
	}
	// Iteration 7 began after the run state was last written.
	if err := state.AppendJournal(p.Journal(), state.Record{Iteration: 7, Node: "c", Event: state.EventStarted, Slot: 3}); err != nil {
		t.Fatal(err)
	}
	temps := []string{
		filepath.Join(p.RunDir(4), "review", fsutil.TempPrefix+"prompt.md-1"),
		filepath.Join(p.RunDir(5), fsutil.TempPrefix+"meta.json-2"),
		filepath.Join(p.RunDir(7), "review", fsutil.TempPrefix+"prompt.md-3"),
		filepath.Join(p.RunDir(7), fsutil.TempPrefix+"context.json-4"),
	}
	kept := filepath.Join(p.RunDir(4), "review", "before", fsutil.TempPrefix+"a file of the work")
	for _, f := range append(temps, kept) {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	openLoaded(t, p)
	for _, f := range temps {
		if _, err := os.Lstat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there (%v)", p.Rel(f), err)
		}
	}
	if _, err := os.Lstat(kept); err != nil {
		t.Errorf("%s, a copy of the work two folders down, was removed: %v", p.Rel(kept), err)
	}
}
