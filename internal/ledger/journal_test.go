package ledger

import (
	"path/filepath"
	"testing"
)

// TestJournalHas checks that a record torn just before its newline is not
// taken as written: the next append cuts it off, so it is written again.
func TestJournalHas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	if has, err := journalHas(path, 1, "recorded"); has || err != nil {
		t.Fatalf("missing journal: %v, %v; want false, nil", has, err)
	}
	write(t, path, `{"iteration":1,"event":"started"}`+"\n"+`{"iteration":1,"event":"recorded"}`)
	for _, c := range []struct {
		iteration int
		event     string
		want      bool
	}{
		{1, "started", true},
		{1, "recorded", false}, // torn
		{2, "started", false},
	} {
		has, err := journalHas(path, c.iteration, c.event)
		if err != nil || has != c.want {
			t.Errorf("journalHas(%d, %s) = %v, %v; want %v", c.iteration, c.event, has, err, c.want)
		}
	}
}
