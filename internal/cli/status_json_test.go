package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// statusRepo writes a repository in the middle of a run: a tree with a
// done, a blocked and an attempted task, three recorded iterations, and a
// fourth started in the journal only.
func statusRepo(t *testing.T) state.Paths {
	t.Helper()
	p := state.NewPaths(t.TempDir())
	for _, dir := range []string{p.StateDir(), p.RunDir(3)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, p.Config(), []byte("[executor]\npreset = \"command\"\ncommand = [\"true\"]\n\n[loop]\nmax_attempts = 4\n"))
	writeFile(t, p.Tree(), []byte(`{"version": 1, "root": {"id": "app", "title": "The app", "children": [
  {"id": "a", "title": "First", "status": "done"},
  {"id": "b", "title": "Second", "status": "blocked", "blocked_reason": "Which database: <b>Postgres</b> or SQLite?"},
  {"id": "grp", "title": "Group", "children": [
    {"id": "c", "title": "Third", "attempts": 2, "max_attempts": 5},
    {"id": "d", "title": "Fourth", "depends_on": ["c"]}
  ]}
]}}
`))
	at := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	rs := &state.RunState{Version: state.RunStateVersion, Iteration: 3, LastNode: "c", LastStatus: "done",
		LastSummary: "tried c\nsecond line", LastGuard: state.GuardFail,
		Usage: state.Usage{InputTokens: 1200, OutputTokens: 300, CostUSD: 0.25, CostSource: state.CostReported}}
	if err := state.SaveRunState(p.RunState(), rs); err != nil {
		t.Fatal(err)
	}
	if err := state.SaveMetaAs(p.RunDir(3), &state.Meta{Iteration: 3, Node: "c", Phase: state.PhaseRecorded, StartedAt: at,
		Outcome: state.OutcomeGuardFailed}, fsutil.NotSynced); err != nil {
		t.Fatal(err)
	}
	for _, r := range []state.Record{
		{Time: at, Iteration: 3, Node: "c", Event: state.EventStarted},
		{Time: at.Add(time.Minute), Iteration: 3, Node: "c", Event: state.EventRecorded, Outcome: state.OutcomeGuardFailed},
		{Time: at.Add(2 * time.Minute), Iteration: 4, Node: "c", Event: state.EventStarted, RunnerPID: 4242},
	} {
		if err := state.AppendJournal(p.Journal(), r); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// TestStatusJSONGolden pins what `runner status --json` prints, byte for
// byte: scripts read it.
func TestStatusJSONGolden(t *testing.T) {
	p := statusRepo(t)
	var out, errOut bytes.Buffer
	code := Execute(context.Background(), []string{"--dir", p.Root, "status", "--json"}, Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	if code != 0 {
		t.Fatalf("runner status --json: exit %d: %s", code, errOut.String())
	}
	got := bytes.ReplaceAll(out.Bytes(), []byte(p.Root), []byte("$ROOT"))
	golden := filepath.Join("testdata", "status.golden.json")
	if *update {
		writeFile(t, golden, got)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("runner status --json differs from %s (go test -update rewrites it):\n%s", golden, got)
	}
}
