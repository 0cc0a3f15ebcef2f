package state

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var runStateSeeds = []string{
	`{"version":1,"iteration":0,"last_node":"","last_status":"","last_summary":"","last_guard":"","in_flight":null,"updated_at":"2026-11-22T07:15:00Z"}`,
	`{"version":1,"iteration":4,"last_node":"ops","last_status":"retry","last_summary":"half way","last_guard":"skipped",` +
		`"in_flight":{"iteration":5,"node":"ops","phase":"started","runner_pid":12,"agent_pgid":13,"started_at":"2026-11-22T07:15:00Z"},"updated_at":"2026-11-22T07:15:00Z"}`,
	`{"version":1,"iteration":1,"in_flight":{"iteration":0}}`,
	`{"version":1,"iteration":-1}`,
	`{"version":2}`,
	`{"version":1,"version":1}`,
	`{"version":1,"in_flight":{"started_at":"yesterday"}}`,
	`{"version":1,"last_summary":"\ud800"}`,
	`{"version":1,"iteration":1e400}`,
	`{"version":1,"in_flight":` + strings.Repeat(`{"node":`, 40) + `1` + strings.Repeat(`}`, 41),
	"{\"version\":1,\"last_node\":\"\xff\"}",
	`{"version":1,"itera`,
	``, `null`, `[]`,
}

// FuzzLoadRunState feeds arbitrary bytes to run_state.json: LoadRunState
// never panics, every refusal names the file, and what it accepts is a
// valid state that survives a save and a load unchanged.
func FuzzLoadRunState(f *testing.F) {
	for _, s := range runStateSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "run_state.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := LoadRunState(path)
		if err != nil {
			if s != nil {
				t.Fatalf("LoadRunState returned a state and an error: %v", err)
			}
			if !strings.Contains(err.Error(), "run_state.json") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if s.Version != RunStateVersion || s.Iteration < 0 || (s.InFlight != nil && s.InFlight.Iteration < 1) {
			t.Fatalf("accepted an invalid state: %+v", s)
		}
		if n := s.NextIteration(); n <= s.Iteration || (s.InFlight != nil && n <= s.InFlight.Iteration) {
			t.Fatalf("NextIteration %d would reuse a number of %+v", n, s)
		}
		if err := SaveRunState(path, s); err != nil {
			t.Fatal(err)
		}
		back, err := LoadRunState(path)
		if err != nil {
			t.Fatalf("a saved state does not load: %v", err)
		}
		if !reflect.DeepEqual(normalTimes(back), normalTimes(s)) {
			t.Fatalf("round trip changed the state:\n%+v\n%+v", back, s)
		}
	})
}

// normalTimes drops the monotonic clock and location, which JSON does not
// carry.
func normalTimes(s *RunState) *RunState {
	c := *s
	c.UpdatedAt = c.UpdatedAt.UTC().Round(0)
	if s.InFlight != nil {
		in := *s.InFlight
		in.StartedAt = in.StartedAt.UTC().Round(0)
		c.InFlight = &in
	}
	return &c
}

// FuzzReadJournal feeds arbitrary bytes to journal.jsonl: ReadJournal
// never panics, and when it reads the journal, appending a record (which
// first cuts off a torn last line) gives exactly one more record.
func FuzzReadJournal(f *testing.F) {
	for _, s := range []string{
		"",
		`{"time":"2026-11-22T07:15:00Z","iteration":1,"node":"a","event":"started"}` + "\n",
		`{"time":"2026-11-22T07:15:00Z","iteration":1,"event":"recorded"}` + "\n" + `{"iteration":2,"ev`,
		`{"iteration":1,"event":"recorded"}`, // complete JSON, no newline: torn
		"garbage\n" + `{"iteration":1,"event":"recorded"}` + "\n",
		"\n\n",
		`{"iteration":"x"}` + "\n",
		strings.Repeat("x", 70000) + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "journal.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		recs, err := ReadJournal(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(recs) > bytes.Count(data, []byte{'\n'}) {
			t.Fatalf("%d records from %d complete lines", len(recs), bytes.Count(data, []byte{'\n'}))
		}
		if err := AppendJournal(path, Record{Iteration: 99, Event: EventReset}); err != nil {
			t.Fatal(err)
		}
		after, err := ReadJournal(path)
		if err != nil {
			t.Fatalf("the journal does not read after an append: %v", err)
		}
		if len(after) != len(recs)+1 || after[len(after)-1].Iteration != 99 {
			t.Fatalf("%d records before the append, %d after; want one more", len(recs), len(after))
		}
	})
}

// FuzzLoadMeta feeds arbitrary bytes to a run's meta.json: LoadMeta never
// panics and every refusal names the file.
func FuzzLoadMeta(f *testing.F) {
	for _, s := range []string{
		`{"iteration":3,"node":"ops","node_path":"calc/ops","attempt":1,"max_attempts":3,"phase":"agent_done",` +
			`"started_at":"2026-11-22T07:15:00Z","duration_ms":0,"prompt":{"bytes":10,"budget":40960},` +
			`"agent":{"argv":["codex"],"exit_code":0,"class":"ok","duration_ms":5},"agent_status":"done","attempts":0}`,
		`{"iteration":1,"guards":[{"name":"t","exit_code":1,"duration_ms":2,"status":"fail"}]}`,
		`{"iteration":1,"iteration":2}`,
		`{"agent":{"argv":"codex"}}`,
		`{"prompt":` + strings.Repeat(`{"x":`, 40) + `1` + strings.Repeat(`}`, 41),
		``, `{`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(MetaFile(dir), data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := LoadMeta(dir)
		if (m == nil) == (err == nil) {
			t.Fatalf("LoadMeta returned %v and %v", m, err)
		}
		if err != nil && !strings.Contains(err.Error(), "meta.json") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

// FuzzLastStart holds LastStart, which reads the journal's end backwards,
// to a forward scan of the same complete lines: the last started record
// and whether a record ending its iteration follows it.
func FuzzLastStart(f *testing.F) {
	for _, s := range []string{
		"",
		`{"iteration":1,"node":"a","event":"started"}` + "\n",
		`{"iteration":1,"event":"started"}` + "\n" + `{"iteration":1,"event":"recorded"}` + "\n",
		`{"iteration":1,"event":"started"}` + "\n" + `{"iteration":2,"event":"recorded"}` + "\n" + `{"iteration":2,"event":"started"}`,
		`{"iteration":3,"event":"started"}` + "\n" + `garbage "event":"aborted"` + "\n" + `{"iteration":3,"event":"interrupted","summary":"\"event\":\"started\""}` + "\n",
		`{"iteration":1,"event": "started"}` + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "journal.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rec, finished, err := LastStart(path)
		if err != nil {
			t.Fatal(err)
		}
		// The forward scan, over the complete lines the window holds.
		if len(data) > journalTail {
			data = data[len(data)-journalTail:]
			data = data[bytes.IndexByte(data, '\n')+1:]
		}
		data = data[:bytes.LastIndexByte(data, '\n')+1]
		var want *Record
		wantFinished := false
		for _, line := range bytes.Split(data, []byte{'\n'}) {
			var r Record
			if json.Unmarshal(line, &r) != nil {
				continue
			}
			marked := func(event string) bool { return bytes.Contains(line, []byte(`"event":"`+event+`"`)) }
			switch {
			case r.Event == EventStarted && marked(EventStarted):
				want, wantFinished = &r, false
			case (r.Event == EventRecorded && marked(EventRecorded)) || (r.Event == EventInterrupted && marked(EventInterrupted)) ||
				(r.Event == EventAborted && marked(EventAborted)):
				if want != nil && r.Iteration == want.Iteration {
					wantFinished = true
				}
			}
		}
		if (rec == nil) != (want == nil) || (rec != nil && (rec.Iteration != want.Iteration || rec.Node != want.Node || finished != wantFinished)) {
			t.Fatalf("LastStart = %+v, %v; the forward scan finds %+v, %v", rec, finished, want, wantFinished)
		}
	})
}
