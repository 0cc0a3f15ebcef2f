package loop

import (
	"context"
	"io"
	"os"
	"reflect"
	"testing"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/config"
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
			cfg := config.Default()
			cfg.Loop.KeepRuns = tt.keep
			r := &Runner{p: p, cfg: cfg, log: log.New(io.Discard)}
			r.pruneRuns(tt.last)
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
	cfg := config.Default()
	cfg.Loop.KeepRuns = 2
	r := &Runner{p: p, cfg: cfg, log: log.New(io.Discard)}
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
		r.pruneRuns(n)
	}
	if got, want := runFolders(t, p), []int{5, 6, 100}; !reflect.DeepEqual(got, want) {
		t.Errorf("folders left %v, want %v", got, want)
	}
}

// TestRunKeepsRuns runs the loop with loop.keep_runs = 2: the state, the
// journal and the last run folders survive, older folders do not.
func TestRunKeepsRuns(t *testing.T) {
	p := state.NewPaths(t.TempDir())
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, p.Config(), `[executor]
preset = "command"
command = ["sh", "-c", "cat > /dev/null; echo '{\"status\": \"retry\", \"summary\": \"again\"}'"]

[loop]
max_attempts = 100
keep_runs = 2
`)
	write(t, p.Tree(), testTree)
	res, err := Run(context.Background(), Options{Paths: p, MaxIterations: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != MaxIterations || res.Iterations != 5 {
		t.Fatalf("run ended with %+v", res)
	}
	if got, want := runFolders(t, p), []int{4, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("folders left %v, want %v", got, want)
	}
	rs, err := state.LoadRunState(p.RunState())
	if err != nil || rs.Iteration != 5 || rs.InFlight != nil {
		t.Fatalf("run state %+v, %v", rs, err)
	}
	recs, err := state.ReadJournal(p.Journal())
	if err != nil {
		t.Fatal(err)
	}
	recorded := 0
	for _, rec := range recs {
		if rec.Event == state.EventRecorded {
			recorded++
		}
	}
	if recorded != 5 {
		t.Errorf("journal holds %d recorded records, want 5", recorded)
	}
	// The next run starts from the kept folders and goes on numbering.
	if _, err := Run(context.Background(), Options{Paths: p, MaxIterations: 1}); err != nil {
		t.Fatal(err)
	}
	if got, want := runFolders(t, p), []int{5, 6}; !reflect.DeepEqual(got, want) {
		t.Errorf("after one more run: folders left %v, want %v", got, want)
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

// TestRunRotatesJournal runs the loop with loop.keep_runs and a small
// rotation size: the journal is rotated into journal.1.jsonl, neither
// file grows past the size by more than an iteration's records, every
// iteration's records stay together in one file, and none is lost or
// repeated between the two files.
func TestRunRotatesJournal(t *testing.T) {
	defer func(b, m int64) { journalBytesPerRun, minJournalRotate = b, m }(journalBytesPerRun, minJournalRotate)
	journalBytesPerRun, minJournalRotate = 100, 2000 // keep_runs = 2: rotate past 2000 bytes
	p := state.NewPaths(t.TempDir())
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, p.Config(), `[executor]
preset = "command"
command = ["sh", "-c", "cat > /dev/null; echo '{\"status\": \"retry\", \"summary\": \"again\"}'"]

[loop]
max_attempts = 100
keep_runs = 2
`)
	write(t, p.Tree(), testTree)
	if _, err := Run(context.Background(), Options{Paths: p, MaxIterations: 30}); err != nil {
		t.Fatal(err)
	}
	old, err := state.ReadJournal(p.OldJournal())
	if err != nil {
		t.Fatal(err)
	}
	cur, err := state.ReadJournal(p.Journal())
	if err != nil {
		t.Fatal(err)
	}
	if len(old) == 0 {
		t.Fatal("journal.1.jsonl is empty or missing: the journal was never rotated")
	}
	for _, path := range []string{p.Journal(), p.OldJournal()} {
		if st, err := os.Stat(path); err != nil || st.Size() > 2000+1500 {
			t.Errorf("%s: %v bytes (%v), want at most the rotation size and one iteration", path, st.Size(), err)
		}
	}
	// The records of both files, oldest first: whole iterations, each
	// started and recorded once, numbered up to 30 without a gap.
	seen := map[int][]string{}
	next := 0
	for _, rec := range append(old, cur...) {
		if rec.Event == state.EventStarted {
			if next != 0 && rec.Iteration != next {
				t.Errorf("started record of iteration %d after iteration %d", rec.Iteration, next-1)
			}
			next = rec.Iteration + 1
		}
		seen[rec.Iteration] = append(seen[rec.Iteration], rec.Event)
	}
	if next != 31 {
		t.Errorf("the last started record is of iteration %d, want 30", next-1)
	}
	for n, events := range seen {
		if events[0] != state.EventStarted || events[len(events)-1] != state.EventRecorded || len(events) != 4 {
			t.Errorf("iteration %d: records %v, want started, agent_done, guards_done, recorded", n, events)
		}
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
	r := &Runner{p: p, resuming: true}
	if err := r.journalOnce(rec); err != nil {
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
