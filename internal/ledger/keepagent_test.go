package ledger

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/state"
)

// TestKeepBeforeAgent: what the judges read before an agent starts (the
// journal with the iteration's started record, the notes of the last
// one) is in the keep before the agent can remove it, so that the
// runner's restore after an agent's `git clean` gives back exactly that,
// and the judges see no change of the agent's.
func TestKeepBeforeAgent(t *testing.T) {
	p := scratchPaths(t)
	if err := os.Mkdir(filepath.Join(p.Root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	k, err := state.OpenKeep(p)
	if err != nil || k == nil {
		t.Fatalf("OpenKeep = %v, %v", k, err)
	}
	l := &Ledger{p: p, log: log.New(io.Discard), keep: k, rs: &state.RunState{Iteration: 1}}
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(p.Journal(), `{"iteration":1,"event":"started"}`+"\n")
	write(p.Assumptions(), "# Assumptions\n")
	l.syncKeep(l.rs) // the last sync, at iteration 1's agent
	// Iteration 1 is recorded, iteration 2 begins: the keep lags.
	write(p.Journal(), `{"iteration":1,"event":"started"}`+"\n"+`{"iteration":1,"event":"recorded"}`+"\n"+`{"iteration":2,"event":"started"}`+"\n")
	write(p.Assumptions(), "# Assumptions\n\n- [iteration 1, node a] a was easy\n")
	before := map[string]string{}
	for _, f := range []string{p.Journal(), p.Assumptions()} {
		data, _ := os.ReadFile(f)
		before[f] = string(data)
	}

	l.KeepBeforeAgent()
	// The agent cleans at once.
	for f := range before {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := k.Restore(); err != nil {
		t.Fatal(err)
	}
	for f, want := range before {
		if got, _ := os.ReadFile(f); string(got) != want {
			t.Errorf("%s put back as\n%s\nwant\n%s", p.Rel(f), got, want)
		}
	}
}

// BenchmarkKeepBeforeAgent measures what an agent run now costs before it
// starts: bringing the keep up to date after an iteration appended its
// records and notes (a 1 MiB journal, a run folder to link).
func BenchmarkKeepBeforeAgent(b *testing.B) {
	p := scratchPaths(b)
	if err := os.Mkdir(filepath.Join(p.Root, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	k, err := state.OpenKeep(p)
	if err != nil || k == nil {
		b.Fatalf("OpenKeep = %v, %v", k, err)
	}
	line := []byte(`{"time":"2026-11-29T08:30:01.851276984Z","iteration":2,"node":"a","event":"recorded","agent_status":"done","guard":"pass","outcome":"done","summary":"did it"}` + "\n")
	big := make([]byte, 0, 1<<20)
	for len(big) < 1<<20 {
		big = append(big, line...)
	}
	for _, f := range []string{p.Journal(), p.Assumptions(), p.Questions(), p.Tree(), p.Config()} {
		if err := os.WriteFile(f, big[:4096], 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(p.Journal(), big, 0o644); err != nil {
		b.Fatal(err)
	}
	l := &Ledger{p: p, log: log.New(io.Discard), keep: k, rs: &state.RunState{}}
	l.KeepBeforeAgent()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		n := i + 1
		os.MkdirAll(p.RunDir(n), 0o755)
		os.WriteFile(filepath.Join(p.RunDir(n), "meta.json"), line, 0o644)
		f, _ := os.OpenFile(p.Journal(), os.O_APPEND|os.O_WRONLY, 0o644)
		f.Write(line)
		f.Write(line)
		f.Close()
		l.rs.Iteration = n
		b.StartTimer()
		l.KeepBeforeAgent()
	}
}
