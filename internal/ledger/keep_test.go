package ledger

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/state"
)

// TestKeepLinksNoFolderInFlight: with parallel slots iterations finish out
// of order, and the keep must not hard-link the run folder of one whose
// agent still works (codex refuses to write an output file that has two
// links, and the attempt is charged): only folders up to the first
// iteration still under way are linked.
func TestKeepLinksNoFolderInFlight(t *testing.T) {
	p := scratchPaths(t)
	if err := os.Mkdir(filepath.Join(p.Root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := func(n int) string { return filepath.Join(p.RunDir(n), "last_message.txt") }
	for n := 1; n <= 3; n++ {
		if err := os.MkdirAll(p.RunDir(n), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out(n), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k, err := state.OpenKeep(p)
	if err != nil || k == nil {
		t.Fatalf("OpenKeep = %v, %v", k, err)
	}
	l := &Ledger{p: p, log: log.New(io.Discard), keep: k}
	links := func(n int) uint64 {
		st, err := os.Stat(out(n))
		if err != nil {
			t.Fatal(err)
		}
		return st.Sys().(*syscall.Stat_t).Nlink
	}

	// 1 and 3 under way, 2 finished: nothing may be linked.
	rs := &state.RunState{Iteration: 2}
	rs.AddFlight(&state.InFlight{Iteration: 1, Node: "a", Phase: state.PhaseStarted, Slot: 1})
	rs.AddFlight(&state.InFlight{Iteration: 3, Node: "c", Phase: state.PhaseStarted, Slot: 2})
	l.syncKeep(rs)
	for n := 1; n <= 3; n++ {
		if got := links(n); got != 1 {
			t.Errorf("with iterations 1 and 3 under way: runs/%d's output file has %d links, want 1", n, got)
		}
	}

	// 1 finished too: 1 and 2 are linked, 3 still not.
	rs.EndFlight(1)
	l.syncKeep(rs)
	for n, want := range map[int]uint64{1: 2, 2: 2, 3: 1} {
		if got := links(n); got != want {
			t.Errorf("with iteration 3 under way: runs/%d's output file has %d links, want %d", n, got, want)
		}
	}

	// 3 finished: linked at the next sync.
	rs.EndFlight(3)
	rs.Iteration = 3
	l.syncKeep(rs)
	if got := links(3); got != 2 {
		t.Errorf("after iteration 3 finished: %d links, want 2", got)
	}
}

// scratchPaths is a .runner folder with its state/ and runs/ in a new
// temporary folder, a repository only when the test makes it one.
func scratchPaths(t testing.TB) state.Paths {
	t.Helper()
	root := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(root))
	p := state.NewPaths(root)
	for _, d := range []string{p.StateDir(), p.RunsDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return p
}
