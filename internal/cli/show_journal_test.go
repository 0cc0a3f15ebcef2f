package cli

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/runner-cli/runner/internal/state"
)

func TestTraceIteration(t *testing.T) {
	p := state.NewPaths(t.TempDir())
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	add := func(path string, r state.Record) {
		t.Helper()
		if err := state.AppendJournal(path, r); err != nil {
			t.Fatal(err)
		}
	}
	add(p.OldJournal(), state.Record{Node: "a", Event: state.EventReset}) // no iteration
	add(p.OldJournal(), state.Record{Iteration: 3, Node: "a", Event: state.EventStarted})
	add(p.OldJournal(), state.Record{Iteration: 30, Node: "b", Event: state.EventStarted})
	add(p.Journal(), state.Record{Iteration: 3, Node: "a", Event: state.EventRecorded, Outcome: "done"})
	add(p.Journal(), state.Record{Iteration: 31, Node: "c", Event: state.EventStarted})
	f, err := os.OpenFile(p.Journal(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"iteration":3,"event":"torn`) // a torn last line
	f.Close()

	tr, err := traceIteration(p, 3)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, r := range tr.Records {
		events = append(events, r.Event)
	}
	if got := strings.Join(events, ","); got != "started,recorded" {
		t.Errorf("events of iteration 3 = %s, want started,recorded", got)
	}
	if tr.Oldest != 3 || len(tr.Files) != 2 {
		t.Errorf("oldest %d, files %q; want 3 and both journals", tr.Oldest, tr.Files)
	}

	tr, err = traceIteration(p, 4)
	if err != nil || len(tr.Records) != 0 || tr.Oldest != 3 {
		t.Errorf("iteration 4: %+v, %v; want no records, oldest 3", tr, err)
	}
}

// A FIFO in the journal's place is refused at once, not waited on.
func TestTraceIterationRefusesFIFO(t *testing.T) {
	p := state.NewPaths(t.TempDir())
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p.OldJournal(), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	if _, err := traceIteration(p, 1); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("traceIteration with a FIFO journal: %v, want a refusal", err)
	}
}
