package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRunStateRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run_state.json")
	s, err := LoadRunState(path)
	if err != nil || s.Iteration != 0 || s.NextIteration() != 1 {
		t.Fatalf("fresh state = %+v, %v", s, err)
	}
	s.Iteration = 4
	s.LastNode, s.LastStatus, s.LastGuard, s.LastSummary = "ops", "retry", GuardSkipped, "half way"
	s.InFlight = &InFlight{Iteration: 5, Node: "ops", Phase: PhaseStarted, RunnerPID: 1, StartedAt: time.Now()}
	if err := SaveRunState(path, s); err != nil {
		t.Fatal(err)
	}
	got, err := LoadRunState(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.LastSummary != "half way" || got.InFlight == nil || got.InFlight.Phase != PhaseStarted {
		t.Fatalf("round trip lost data: %+v", got)
	}
	if n := got.NextIteration(); n != 6 {
		t.Fatalf("NextIteration = %d, want 6 (the in-flight number is never reused)", n)
	}
}

func TestLoadRunStateRejects(t *testing.T) {
	tests := map[string]string{
		"unknown field": `{"version":1,"iteration":1,"bogus":true}`,
		"duplicate key": `{"version":1,"iteration":1,"iteration":2}`,
		"wrong version": `{"version":9}`,
		"torn":          `{"version":1,"itera`,
	}
	for name, content := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "run_state.json")
			os.WriteFile(path, []byte(content), 0o644)
			_, err := LoadRunState(path)
			if err == nil || !strings.Contains(err.Error(), "run_state.json") {
				t.Fatalf("want an error naming the file, got %v", err)
			}
		})
	}
}

func TestJournalIgnoresTornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	for i := 1; i <= 3; i++ {
		if err := AppendJournal(path, Record{Iteration: i, Event: EventRecorded}); err != nil {
			t.Fatal(err)
		}
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"iteration":4,"ev`)
	f.Close()
	recs, err := ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[2].Iteration != 3 {
		t.Fatalf("got %d records: %+v", len(recs), recs)
	}

	// Damage in the middle is reported, with the line number.
	data, _ := os.ReadFile(path)
	os.WriteFile(path, append([]byte("garbage\n"), data...), 0o644)
	if _, err := ReadJournal(path); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("want a line-1 error, got %v", err)
	}
}

func TestLockIsExclusive(t *testing.T) {
	p := NewPaths(t.TempDir())
	os.MkdirAll(p.Dir, 0o755)
	l, err := AcquireLock(p)
	if err != nil {
		t.Fatal(err)
	}
	held, holder, err := LockHolder(p)
	if err != nil || !held || HolderPID(holder) != os.Getpid() {
		t.Fatalf("LockHolder = %v %q %v", held, holder, err)
	}
	if _, err := AcquireLock(p); err == nil || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("second AcquireLock should fail naming the pid, got %v", err)
	}
	l.Release()
	if held, _, _ := LockHolder(p); held {
		t.Fatal("lock still held after Release")
	}
	l2, err := AcquireLock(p)
	if err != nil {
		t.Fatalf("re-acquire after release: %v", err)
	}
	l2.Release()
	if _, err := os.Stat(p.Lock()); err != nil {
		t.Fatal("the lock file must never be deleted")
	}
}

func TestAppendNotes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "questions.md")
	if err := AppendNotes(path, "Open Questions", 3, "ops", []string{"which\nbase?", "  "}); err != nil {
		t.Fatal(err)
	}
	if err := AppendNotes(path, "Open Questions", 4, "parse", []string{"second"}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := "# Open Questions\n\n- [iteration 3, node ops] which base?\n- [iteration 4, node parse] second\n"
	if string(data) != want {
		t.Fatalf("notes file =\n%s\nwant\n%s", data, want)
	}
}

func TestLastRun(t *testing.T) {
	p := NewPaths(t.TempDir())
	if n, err := LastRun(p); n != 0 || err != nil {
		t.Fatalf("LastRun on nothing = %d, %v", n, err)
	}
	for _, n := range []int{1, 2, 10} {
		os.MkdirAll(p.RunDir(n), 0o755)
	}
	os.MkdirAll(filepath.Join(p.RunsDir(), "notes"), 0o755)
	if n, _ := LastRun(p); n != 10 {
		t.Fatalf("LastRun = %d, want 10", n)
	}
}

// TestUnfinishedStart checks which started record the journal leaves
// unanswered.
func TestUnfinishedStart(t *testing.T) {
	started := func(n int) Record { return Record{Iteration: n, Node: "a", Event: EventStarted} }
	ended := func(n int, event string) Record { return Record{Iteration: n, Node: "a", Event: event} }
	cases := []struct {
		name string
		recs []Record
		torn string // appended after the records, without a newline
		want int    // iteration of the unfinished start, 0 for none
	}{
		{"no journal", nil, "", 0},
		{"started", []Record{started(1)}, "", 1},
		{"started, agent done", []Record{started(1), ended(1, EventAgentDone)}, "", 1},
		{"recorded", []Record{started(1), ended(1, EventRecorded)}, "", 0},
		{"interrupted", []Record{started(1), ended(1, EventInterrupted)}, "", 0},
		{"aborted", []Record{started(1), ended(1, EventAborted)}, "", 0},
		{"next started", []Record{started(1), ended(1, EventRecorded), started(2)}, "", 2},
		{"reset after a recorded one", []Record{started(1), ended(1, EventRecorded), {Event: EventReset, Node: "a"}}, "", 0},
		{"another iteration's end", []Record{started(2), ended(1, EventRecorded)}, "", 2},
		{"torn started record", []Record{started(1), ended(1, EventRecorded)}, `{"iteration":2,"event":"started"`, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "journal.jsonl")
			for _, r := range c.recs {
				if err := AppendJournal(path, r); err != nil {
					t.Fatal(err)
				}
			}
			if c.torn != "" {
				f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(c.torn)
				f.Close()
			}
			rec, err := UnfinishedStart(path)
			if err != nil {
				t.Fatal(err)
			}
			got := 0
			if rec != nil {
				got = rec.Iteration
			}
			if got != c.want {
				t.Errorf("UnfinishedStart = iteration %d, want %d", got, c.want)
			}
		})
	}
}

// TestUnfinishedStartReadsOnlyTheEnd checks a journal longer than the
// window UnfinishedStart reads: the record cut by the window's start is
// skipped, and the started record at the end is found.
func TestUnfinishedStartReadsOnlyTheEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	var buf bytes.Buffer
	summary := strings.Repeat("x", 500)
	for n := 1; buf.Len() < 2*journalTail; n++ {
		for _, ev := range []string{EventStarted, EventRecorded} {
			line, _ := json.Marshal(Record{Iteration: n, Node: "a", Event: ev, Summary: summary})
			buf.Write(append(line, '\n'))
		}
	}
	line, _ := json.Marshal(Record{Iteration: 1 << 20, Node: "b", Event: EventStarted})
	buf.Write(append(line, '\n'))
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := UnfinishedStart(path)
	if err != nil {
		t.Fatal(err)
	}
	if rec == nil || rec.Iteration != 1<<20 || rec.Node != "b" {
		t.Errorf("UnfinishedStart = %+v, want the last started record", rec)
	}
}

// TestCurrentInFlight checks which iteration status and show report as
// under way, from run_state.json and the end of the journal together.
func TestCurrentInFlight(t *testing.T) {
	started := func(n int) Record { return Record{Iteration: n, Node: "a", Event: EventStarted, RunnerPID: 7} }
	recorded := func(n int) Record { return Record{Iteration: n, Node: "a", Event: EventRecorded} }
	marker := func(n int) *InFlight { return &InFlight{Iteration: n, Node: "a", Phase: PhaseAgentDone, AgentPGID: 99} }
	cases := []struct {
		name string
		rs   RunState
		recs []Record
		want int // iteration in flight, 0 for none
		pgid bool
	}{
		{"nothing", RunState{}, nil, 0, false},
		{"marker, no journal", RunState{InFlight: marker(3)}, nil, 3, true},
		{"marker and its started record", RunState{Iteration: 2, InFlight: marker(3)}, []Record{started(3)}, 3, true},
		{"journal ahead of the run state", RunState{Iteration: 2}, []Record{recorded(2), started(3)}, 3, false},
		{"journal ahead of a stale marker", RunState{Iteration: 1, InFlight: marker(2)}, []Record{started(2), recorded(2), started(3)}, 3, false},
		{"marker of a recorded iteration", RunState{Iteration: 1, InFlight: marker(2)}, []Record{started(2), recorded(2)}, 0, false},
		{"all recorded", RunState{Iteration: 3}, []Record{started(3), recorded(3)}, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := NewPaths(t.TempDir())
			if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, r := range c.recs {
				if err := AppendJournal(p.Journal(), r); err != nil {
					t.Fatal(err)
				}
			}
			in := CurrentInFlight(p, &c.rs)
			got := 0
			if in != nil {
				got = in.Iteration
			}
			if got != c.want {
				t.Fatalf("CurrentInFlight = %+v, want iteration %d", in, c.want)
			}
			if in != nil && (in.AgentPGID == 99) != c.pgid {
				t.Errorf("CurrentInFlight = %+v: from run_state.json %v, want %v", in, in.AgentPGID == 99, c.pgid)
			}
		})
	}
}

// TestLockSurvivesRemovedLockFile: an agent that deletes .runner/lock (or
// replaces it) does not let a second runner in: the lock is held on the
// .runner directory itself. Check writes the holder file again, and
// reports a .runner directory that was replaced.
func TestLockSurvivesRemovedLockFile(t *testing.T) {
	p := NewPaths(t.TempDir())
	os.MkdirAll(p.Dir, 0o755)
	l, err := AcquireLock(p)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if err := os.Remove(p.Lock()); err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireLock(p); !errors.Is(err, ErrLocked) {
		t.Fatalf("second AcquireLock after the lock file was removed = %v, want ErrLocked", err)
	}
	if held, _, _ := LockHolder(p); !held {
		t.Fatal("LockHolder says nobody holds the lock after its file was removed")
	}
	if err := l.Check(); err != nil {
		t.Fatalf("Check = %v", err)
	}
	if got, _ := os.ReadFile(p.Lock()); !strings.Contains(string(got), fmt.Sprintf("pid %d ", os.Getpid())) {
		t.Errorf("Check did not write the holder again: %q", got)
	}

	// The agent moves .runner away and puts a copy in its place.
	if err := os.Rename(p.Dir, p.Dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := l.Check(); !errors.Is(err, ErrLockLost) {
		t.Fatalf("Check after .runner was replaced = %v, want ErrLockLost", err)
	}
}

// TestNotesRotate: notes that would grow past NotesLimit are moved aside
// (assumptions.1.md) and a new file begins; the prompt reads the end of a
// file of any size; nothing is refused.
func TestNotesRotate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "assumptions.md")
	item := strings.Repeat("an assumption about the project ", 120)
	n := 0
	for ; n < 400; n++ {
		if err := AppendNotes(path, "Assumptions", n, "b", []string{item}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > NotesLimit {
		t.Errorf("assumptions.md is %d bytes, above NotesLimit %d", st.Size(), NotesLimit)
	}
	old, err := os.ReadFile(RotatedNotes(path))
	if err != nil || len(old) == 0 {
		t.Fatalf("no rotated file %s: %v", RotatedNotes(path), err)
	}
	cur, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(cur), "# Assumptions\n\n") || !strings.Contains(string(cur), fmt.Sprintf("[iteration %d, node b]", n-1)) {
		t.Errorf("the new file lacks its heading or the last note: %.200q", cur)
	}
	tail, err := ReadNotesTail(RotatedNotes(path), 4096)
	if err != nil {
		t.Fatal(err)
	}
	if len(tail) > 4096+100 || !strings.HasPrefix(tail, "[older notes left out") || !strings.HasSuffix(tail, "\n") {
		t.Errorf("ReadNotesTail = %d bytes starting %.80q", len(tail), tail)
	}
	if got, err := ReadNotesTail(filepath.Join(t.TempDir(), "none.md"), 10); got != "" || err != nil {
		t.Errorf("ReadNotesTail of a missing file = %q, %v", got, err)
	}
}

// TestFlights: with parallel slots several iterations are in flight; the
// earliest is in_flight, the others in_flight_more, whatever the order
// they were added and ended in, and they survive a save and a load.
func TestFlights(t *testing.T) {
	var s RunState
	for _, n := range []int{7, 5, 6} {
		s.AddFlight(&InFlight{Iteration: n, Node: fmt.Sprint("n", n), Phase: PhaseStarted, Slot: n - 4})
	}
	if s.InFlight.Iteration != 5 || len(s.MoreInFlight) != 2 || s.NextIteration() != 8 {
		t.Fatalf("flights %+v %+v, next %d", s.InFlight, s.MoreInFlight, s.NextIteration())
	}
	s.EndFlight(5)
	if s.InFlight.Iteration != 6 || len(s.MoreInFlight) != 1 || s.Flight(7) == nil || s.Flight(5) != nil {
		t.Fatalf("after ending 5: %+v %+v", s.InFlight, s.MoreInFlight)
	}
	path := filepath.Join(t.TempDir(), "run_state.json")
	s.Version = RunStateVersion
	if err := SaveRunState(path, &s); err != nil {
		t.Fatal(err)
	}
	got, err := LoadRunState(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Flights()) != 2 || got.Flights()[1].Slot != 3 {
		t.Fatalf("loaded %+v", got.Flights())
	}
	s.EndFlight(6)
	s.EndFlight(7)
	if s.InFlight != nil || s.MoreInFlight != nil {
		t.Fatalf("all ended: %+v %+v", s.InFlight, s.MoreInFlight)
	}
	// in_flight_more without in_flight is refused.
	os.WriteFile(path, []byte(`{"version":1,"iteration":2,"in_flight":null,"in_flight_more":[{"iteration":3,"node":"a","phase":"started"}]}`), 0o644)
	if _, err := LoadRunState(path); err == nil {
		t.Error("in_flight_more without in_flight was accepted")
	}
}

// TestUnfinishedStarts: the journal's started records that nothing ended,
// after the iterations the run state knows of, earliest first.
func TestUnfinishedStarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	for _, rec := range []Record{
		{Iteration: 4, Event: EventStarted}, {Iteration: 5, Event: EventStarted, Slot: 2},
		{Iteration: 4, Event: EventRecorded}, {Iteration: 7, Event: EventStarted, Slot: 1},
		{Iteration: 6, Event: EventStarted, Slot: 3}, {Iteration: 6, Event: EventAborted},
	} {
		if err := AppendJournal(path, rec); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := UnfinishedStarts(path, 4)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, r := range recs {
		got = append(got, r.Iteration)
	}
	if fmt.Sprint(got) != "[5 7]" || recs[0].Slot != 2 {
		t.Fatalf("unfinished %v (%+v), want [5 7]", got, recs)
	}
	if recs, _ := UnfinishedStarts(path, 5); len(recs) != 1 || recs[0].Iteration != 7 {
		t.Fatalf("after 5: %+v", recs)
	}
}
