package ledger_test

import (
	"context"
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/ledger"
	"github.com/runner-cli/runner/internal/loop"
	"github.com/runner-cli/runner/internal/state"
)

// TestRunRotatesJournal runs the loop with loop.keep_runs and a small
// rotation size: the journal is rotated into journal.1.jsonl, neither
// file grows past the size by more than an iteration's records, every
// iteration's records stay together in one file, and none is lost or
// repeated between the two files.
func TestRunRotatesJournal(t *testing.T) {
	defer ledger.SetJournalRotation(100, 2000)() // keep_runs = 2: rotate past 2000 bytes
	p := state.NewPaths(t.TempDir())
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, p.Config(), `[executor]
preset = "command"
command = ["sh", "-c", "cat > /dev/null; echo '{\"status\": \"retry\", \"summary\": \"again\"}'"]

[loop]
max_attempts = 100
keep_runs = 2
`)
	writeFile(t, p.Tree(), `{"version": 1, "root": {"id": "app", "title": "App", "children": [{"id": "a", "title": "A"}]}}`)
	if _, err := loop.Run(context.Background(), loop.Options{Paths: p, MaxIterations: 30}); err != nil {
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

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
