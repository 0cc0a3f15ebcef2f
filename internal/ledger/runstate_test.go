package ledger

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

// TestRunStateChanged: what the ledger wrote to run_state.json, by
// saveState or in the background of AgentStarted, is what an agent's
// change is told from. The same state in another layout is no change; a
// changed field is one, returned as the agent left it, and the file is
// written again from memory.
func TestRunStateChanged(t *testing.T) {
	p := scratchPaths(t)
	owned := map[string]state.Owned{}
	for _, id := range []string{"a", "b", "c"} {
		owned[id] = state.Owned{Status: "done", At: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}
	}
	l := &Ledger{p: p, log: log.New(io.Discard), rs: &state.RunState{Iteration: 3, LastNode: "c", Owned: owned}}
	if got, err := l.RunStateChanged(); got != nil || err != nil {
		t.Fatalf("before anything was written: RunStateChanged = %q, %v", got, err)
	}
	if err := l.saveState(fsutil.Durable); err != nil {
		t.Fatal(err)
	}
	read := func() []byte {
		t.Helper()
		data, err := os.ReadFile(p.RunState())
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	saved := read()
	if got, err := l.RunStateChanged(); got != nil || err != nil {
		t.Fatalf("file as written: RunStateChanged = %q, %v", got, err)
	}

	// The same state, compacted: no change, and the file is left as it is.
	var compact bytes.Buffer
	if err := json.Compact(&compact, saved); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.RunState(), compact.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := l.RunStateChanged(); got != nil || err != nil {
		t.Fatalf("same state, other layout: RunStateChanged = %q, %v", got, err)
	}
	if !bytes.Equal(read(), compact.Bytes()) {
		t.Error("a run state in another layout was written again")
	}

	// A forged field: returned as found, the file written from memory.
	forged := bytes.Replace(saved, []byte(`"iteration": 3`), []byte(`"iteration": 30`), 1)
	if bytes.Equal(forged, saved) {
		t.Fatalf("no iteration field in\n%s", saved)
	}
	if err := os.WriteFile(p.RunState(), forged, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := l.RunStateChanged()
	if err != nil || !bytes.Equal(got, forged) {
		t.Fatalf("forged iteration: RunStateChanged = %q, %v; want the forged file", got, err)
	}
	if now := read(); !strings.Contains(string(now), `"iteration": 3,`) {
		t.Errorf("run_state.json not written again from memory:\n%s", now)
	}

	// AgentStarted writes in the background: what it wrote is the
	// reference, not the run state in memory, which may move on.
	l.rs.AddFlight(&state.InFlight{Iteration: 4, Node: "d", Phase: state.PhaseStarted})
	l.AgentStarted(4, 4242)
	l.background.Wait()
	if l.backgroundErr != nil {
		t.Fatal(l.backgroundErr)
	}
	if now := read(); !strings.Contains(string(now), `"agent_pgid": 4242`) {
		t.Fatalf("AgentStarted did not write the agent's process group:\n%s", now)
	}
	l.rs.Iteration = 4 // in memory only
	if got, err := l.RunStateChanged(); got != nil || err != nil {
		t.Fatalf("after AgentStarted: RunStateChanged = %q, %v", got, err)
	}
	if err := os.WriteFile(p.RunState(), saved, 0o644); err != nil { // the agent puts an older state back
		t.Fatal(err)
	}
	if got, err := l.RunStateChanged(); err != nil || !bytes.Equal(got, saved) {
		t.Fatalf("older state put back: RunStateChanged = %q, %v; want it", got, err)
	}
}
