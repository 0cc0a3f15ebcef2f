package ledger_test

import (
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/ledger"
	"github.com/runner-cli/runner/internal/state"
)

// From the mark on, the lines another process appends to the journal
// (an unconfined agent's `skipped` record, or a torn one) are taken out
// and returned; the ledger's own lines, before and after them, stay in
// their order, and so does everything before the mark.
func TestForeignJournal(t *testing.T) {
	p := state.NewPaths(t.TempDir())
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(p, log.New(os.Stderr))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// A person's skip before the mark is theirs.
	if err := state.AppendJournal(p.Journal(), state.Record{Node: "x", Event: state.EventSkipped}); err != nil {
		t.Fatal(err)
	}
	if err := l.WatchJournal(); err != nil {
		t.Fatal(err)
	}
	if foreign, err := l.ForeignJournal(); err != nil || len(foreign) != 0 {
		t.Fatalf("nothing appended: %q, %v", foreign, err)
	}
	l.Journal(state.Record{Node: "a", Event: state.EventTamper})
	state.AppendJournal(p.Journal(), state.Record{Node: "b", Event: state.EventSkipped}) // the agent's
	l.Journal(state.Record{Node: "c", Event: state.EventTamper})
	f, _ := os.OpenFile(p.Journal(), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"node":"d","event":"skip`) // torn
	f.Close()

	foreign, err := l.ForeignJournal()
	if err != nil {
		t.Fatal(err)
	}
	if len(foreign) != 2 || !strings.Contains(string(foreign[0]), `"node":"b","event":"skipped"`) || !strings.HasPrefix(string(foreign[1]), `{"node":"d"`) {
		t.Errorf("foreign lines: %q", foreign)
	}
	recs, err := state.ReadJournal(p.Journal())
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, r := range recs {
		nodes = append(nodes, r.Node)
	}
	if strings.Join(nodes, " ") != "x a c" {
		t.Errorf("the journal holds the records of %v, want x (before the mark), a and c (the ledger's)", nodes)
	}
	// The mark moved: nothing is found twice, and the ledger goes on.
	l.Journal(state.Record{Node: "e", Event: state.EventTamper})
	if foreign, err := l.ForeignJournal(); err != nil || len(foreign) != 0 {
		t.Errorf("after the mark moved: %q, %v", foreign, err)
	}
	// A journal cut short is a foreign change.
	os.Truncate(p.Journal(), 10)
	if foreign, _ := l.ForeignJournal(); len(foreign) != 1 || !strings.Contains(string(foreign[0]), "the journal was cut") {
		t.Errorf("a journal cut short: %q", foreign)
	}
}
