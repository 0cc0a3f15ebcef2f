package ledger

import (
	"io"
	"os"
	"reflect"
	"testing"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/state"
)

func TestPruneRuns(t *testing.T) {
	tests := []struct {
		name    string
		keep    int
		folders []int
		last    int
		want    []int
	}{
		{"keep all", 0, []int{1, 2, 3}, 3, []int{1, 2, 3}},
		{"keep three", 3, []int{1, 2, 3, 4, 5, 6}, 6, []int{4, 5, 6}},
		{"keep the last only", 1, []int{1, 2, 3}, 3, []int{3}},
		{"fewer than kept", 5, []int{1, 2}, 2, []int{1, 2}},
		{"numbers with gaps", 2, []int{1, 2, 5, 9}, 9, []int{5, 9}},
		{"never the last or above it", 1, []int{1, 2, 3, 7}, 3, []int{3, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := state.NewPaths(t.TempDir())
			for _, n := range tt.folders {
				if err := os.MkdirAll(p.RunDir(n), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			l := &Ledger{p: p, log: log.New(io.Discard), keepRuns: tt.keep}
			l.pruneRuns(tt.last)
			got := runFolders(t, p)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("folders left %v, want %v", got, tt.want)
			}
		})
	}
}

// TestPruneRunsTracksNewFolders checks that after the first listing each
// recorded iteration removes the oldest folder without listing runs/.
func TestPruneRunsTracksNewFolders(t *testing.T) {
	p := state.NewPaths(t.TempDir())
	l := &Ledger{p: p, log: log.New(io.Discard), keepRuns: 2}
	for n := 1; n <= 6; n++ {
		if err := os.MkdirAll(p.RunDir(n), 0o755); err != nil {
			t.Fatal(err)
		}
		if n == 4 {
			// A folder that appears behind the runner's back is not known
			// until runs/ is listed again; it is never the one removed
			// before its turn.
			if err := os.MkdirAll(p.RunDir(100), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		l.pruneRuns(n)
	}
	if got, want := runFolders(t, p), []int{5, 6, 100}; !reflect.DeepEqual(got, want) {
		t.Errorf("folders left %v, want %v", got, want)
	}
}

// TestJournalOnceAfterRotation checks that a runner recording an
// iteration again finds its recorded line in the rotated journal and does
// not write it a second time.
func TestJournalOnceAfterRotation(t *testing.T) {
	p := state.NewPaths(t.TempDir())
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	rec := state.Record{Iteration: 7, Node: "a", Event: state.EventRecorded}
	if err := state.AppendJournal(p.OldJournal(), rec); err != nil {
		t.Fatal(err)
	}
	if err := state.AppendJournal(p.Journal(), state.Record{Iteration: 8, Node: "a", Event: state.EventStarted}); err != nil {
		t.Fatal(err)
	}
	l := &Ledger{p: p, resuming: true}
	if err := l.journalOnce(rec); err != nil {
		t.Fatal(err)
	}
	recs, err := state.ReadJournal(p.Journal())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Errorf("journal.jsonl holds %d records, want only the started one: %+v", len(recs), recs)
	}
}

func runFolders(t *testing.T, p state.Paths) []int {
	t.Helper()
	runs, err := listRuns(p)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}
