package loop

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/outcome"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// journalRepo makes a repository whose tree has leaves a and b, each
// allowed one attempt, so that a run records what it resumes and then
// stops without starting an agent.
func journalRepo(t *testing.T) state.Paths {
	t.Helper()
	p := stateRepo(t)
	write(t, p.Config(), testConfig)
	write(t, p.Tree(), `{"version": 1, "root": {"id": "app", "title": "App", "children": [
  {"id": "a", "title": "A", "max_attempts": 1},
  {"id": "b", "title": "B", "max_attempts": 1}
]}}
`)
	return p
}

// stateRepo makes the .runner folder of a repository, with its state
// folder, and returns its paths.
func stateRepo(t *testing.T) state.Paths {
	t.Helper()
	p := state.NewPaths(t.TempDir())
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func appendRecords(t *testing.T, p state.Paths, recs ...state.Record) {
	t.Helper()
	for _, rec := range recs {
		if err := state.AppendJournal(p.Journal(), rec); err != nil {
			t.Fatal(err)
		}
	}
}

// countEvents counts the journal's records of event for iteration n.
func countEvents(t *testing.T, p state.Paths, n int, event string) int {
	t.Helper()
	recs, err := state.ReadJournal(p.Journal())
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for _, r := range recs {
		if r.Iteration == n && r.Event == event {
			count++
		}
	}
	return count
}

// TestResumeFromJournalOnly checks the iteration a runner died in after
// its started record was durable and before run_state.json got the
// in-flight marker: the next runner finds it in the journal and records
// it as an interrupted attempt, under its own number.
func TestResumeFromJournalOnly(t *testing.T) {
	p := journalRepo(t)
	// The runner that died had a was at work at the death before: this
	// interruption spends an attempt (state.RunState.Death).
	if err := state.SaveRunState(p.RunState(), &state.RunState{Iteration: 2, LastStatus: "done",
		Deaths: []state.RunnerDeath{{RunnerPID: 1111, Nodes: []string{"a"}}}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now().UTC().Add(-time.Minute)
	appendRecords(t, p,
		state.Record{Iteration: 2, Node: "b", Event: state.EventStarted},
		state.Record{Iteration: 2, Node: "b", Event: state.EventRecorded},
		state.Record{Time: start, Iteration: 3, Node: "a", Event: state.EventStarted, RunnerPID: 4242})
	agentLog(t, p, 3) // the agent had started

	res, err := Run(context.Background(), Options{Paths: p, MaxIterations: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != Stuck {
		t.Errorf("run ended with %+v, want stuck on the blocked leaves", res)
	}
	m, err := state.LoadMeta(p.RunDir(3))
	if err != nil {
		t.Fatalf("runs/000003/meta.json: %v", err)
	}
	if m.Outcome != state.OutcomeInterrupted || m.Node != "a" || !m.StartedAt.Equal(start) {
		t.Errorf("meta.json: outcome %q node %q started %v, want interrupted on a, started %v", m.Outcome, m.Node, m.StartedAt, start)
	}
	tr, err := tree.Load(p.Tree())
	if err != nil {
		t.Fatal(err)
	}
	if a := tr.Root.Children[0]; a.Attempts != 1 || a.Status != tree.StatusBlocked {
		t.Errorf("node a: attempts %d status %q, want the interruption counted (1, blocked)", a.Attempts, a.Status)
	}
	if n := countEvents(t, p, 3, state.EventInterrupted); n != 1 {
		t.Errorf("journal: %d interrupted records for iteration 3, want 1", n)
	}
	rs, err := state.LoadRunState(p.RunState())
	if err != nil {
		t.Fatal(err)
	}
	if rs.InFlight != nil || rs.Iteration != 3 || rs.LastStatus != outcome.LastStatusInterrupted {
		t.Errorf("run_state: in_flight %+v iteration %d last_status %q, want nothing in flight after iteration 3, interrupted", rs.InFlight, rs.Iteration, rs.LastStatus)
	}
	if rec, err := state.UnfinishedStart(p.Journal()); err != nil || rec != nil {
		t.Errorf("UnfinishedStart after the run = %+v, %v; want nothing unfinished", rec, err)
	}
}

// agentLog leaves the log an agent of iteration n starts with, as a
// runner does just before starting it.
func agentLog(t *testing.T, p state.Paths, n int) {
	t.Helper()
	if err := os.MkdirAll(p.RunDir(n), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, p.RunDir(n)+"/"+executor.LogFileName, "working on it\n")
}

// TestResumeBeforeAgentStarted checks an iteration a runner left before
// its agent started (its started record durable, then the runner died,
// or failed to write the prompt): the next runner ends it without
// spending an attempt, and says so in the journal.
func TestResumeBeforeAgentStarted(t *testing.T) {
	for _, folder := range []bool{false, true} {
		t.Run(fmt.Sprintf("run folder %v", folder), func(t *testing.T) {
			p := journalRepo(t)
			appendRecords(t, p, state.Record{Iteration: 1, Node: "a", Event: state.EventStarted, RunnerPID: 4242})
			if folder {
				// The prompt was written; the agent was not started.
				if err := os.MkdirAll(p.RunDir(1), 0o755); err != nil {
					t.Fatal(err)
				}
				write(t, p.RunDir(1)+"/prompt.md", "# Runner Contract\n")
			}
			// Iteration 1 is resolved, then iteration 2 runs the test's
			// agent (`true`, no message: an executor error) on a.
			if _, err := Run(context.Background(), Options{Paths: p, MaxIterations: 1}); err != nil {
				t.Fatal(err)
			}
			m, err := state.LoadMeta(p.RunDir(1))
			if err != nil {
				t.Fatal(err)
			}
			if m.Phase != state.PhaseAborted || m.Outcome != "" || !strings.Contains(m.Note, "before the agent started") {
				t.Errorf("meta.json: phase %q outcome %q note %q; want aborted, no outcome, saying the agent had not started", m.Phase, m.Outcome, m.Note)
			}
			if n := countEvents(t, p, 1, state.EventAborted); n != 1 {
				t.Errorf("journal: %d aborted records for iteration 1, want 1", n)
			}
			if n := countEvents(t, p, 1, state.EventInterrupted); n != 0 {
				t.Errorf("journal: %d interrupted records for iteration 1, want none", n)
			}
			tr, err := tree.Load(p.Tree())
			if err != nil {
				t.Fatal(err)
			}
			if a := tr.Root.Children[0]; a.Attempts != 1 || countEvents(t, p, 2, state.EventRecorded) != 1 {
				t.Errorf("node a: attempts %d; want 1, spent by iteration 2 alone", a.Attempts)
			}
		})
	}
}

// TestResumeBothMarkers checks a crash between an iteration's started
// record and its marker in run_state.json, which still names the
// previous iteration (recorded, but its cleared marker not yet written):
// the previous one is recorded again without a second journal line, and
// the new one is recorded as interrupted.
func TestResumeBothMarkers(t *testing.T) {
	p := journalRepo(t)
	if err := os.MkdirAll(p.RunDir(1), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now().UTC().Add(-time.Minute)
	if err := state.SaveMeta(p.RunDir(1), &state.Meta{Iteration: 1, Node: "a", NodePath: "app/a", Attempt: 1, MaxAttempts: 1,
		Phase: state.PhaseRecorded, StartedAt: start, Agent: &state.AgentMeta{Class: executor.ClassOK},
		AgentStatus: "done", Guard: state.GuardPass, Outcome: state.OutcomeDone, NodeStatus: "done",
		Usage: &state.Usage{InputTokens: 100}, Message: []byte(`{"status": "done", "summary": "did a"}`)}); err != nil {
		t.Fatal(err)
	}
	tr, err := tree.Load(p.Tree())
	if err != nil {
		t.Fatal(err)
	}
	tr.Root.Children[0].Status = tree.StatusDone
	if err := tree.Save(p.Tree(), tr); err != nil {
		t.Fatal(err)
	}
	// b was at work at the runner's death before: its interruption spends
	// an attempt (state.RunState.Death).
	rs := &state.RunState{InFlight: &state.InFlight{Iteration: 1, Node: "a", Phase: state.PhaseStarted, StartedAt: start},
		Deaths: []state.RunnerDeath{{RunnerPID: 1111, Nodes: []string{"b"}}}}
	if err := state.SaveRunStateAs(p.RunState(), rs, fsutil.Durable); err != nil {
		t.Fatal(err)
	}
	appendRecords(t, p,
		state.Record{Iteration: 1, Node: "a", Event: state.EventStarted},
		state.Record{Iteration: 1, Node: "a", Event: state.EventRecorded, Outcome: state.OutcomeDone},
		state.Record{Iteration: 2, Node: "b", Event: state.EventStarted})
	agentLog(t, p, 2)

	if _, err := Run(context.Background(), Options{Paths: p, MaxIterations: 1}); err != nil {
		t.Fatal(err)
	}
	if n := countEvents(t, p, 1, state.EventRecorded); n != 1 {
		t.Errorf("journal: %d recorded records for iteration 1, want 1", n)
	}
	if n := countEvents(t, p, 2, state.EventInterrupted); n != 1 {
		t.Errorf("journal: %d interrupted records for iteration 2, want 1", n)
	}
	tr, err = tree.Load(p.Tree())
	if err != nil {
		t.Fatal(err)
	}
	if a, b := tr.Root.Children[0], tr.Root.Children[1]; a.Status != tree.StatusDone || a.Attempts != 0 || b.Attempts != 1 {
		t.Errorf("tree: a %q/%d, b %q/%d; want a done without an attempt, b with the interrupted attempt", a.Status, a.Attempts, b.Status, b.Attempts)
	}
	got, err := state.LoadRunState(p.RunState())
	if err != nil {
		t.Fatal(err)
	}
	if got.InFlight != nil || got.Iteration != 2 || got.Usage.InputTokens != 100 {
		t.Errorf("run_state: in_flight %+v iteration %d usage %+v; want nothing in flight after iteration 2, iteration 1's usage counted once",
			got.InFlight, got.Iteration, got.Usage)
	}
}

// TestResumeCountsFailedAgentRun checks that an iteration recorded again
// after a crash adds its failed agent run to consecutive_errors when the
// run state on disk was saved before that run: the count is caught up
// once, like the usage.
func TestResumeCountsFailedAgentRun(t *testing.T) {
	for _, failed := range []bool{true, false} {
		t.Run(fmt.Sprintf("failed=%v", failed), func(t *testing.T) {
			p := journalRepo(t)
			tr, err := tree.Load(p.Tree())
			if err != nil {
				t.Fatal(err)
			}
			tr.Root.Children[1].Status = tree.StatusDone // nothing runs after the resume
			if err := tree.Save(p.Tree(), tr); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(p.RunDir(1), 0o755); err != nil {
				t.Fatal(err)
			}
			start := time.Now().UTC().Add(-time.Minute)
			class := executor.ClassAgentError
			if !failed {
				class = executor.ClassOK
			}
			if err := state.SaveMeta(p.RunDir(1), &state.Meta{Iteration: 1, Node: "a", NodePath: "app/a", Attempt: 1, MaxAttempts: 1,
				Phase: state.PhaseRecorded, StartedAt: start, Agent: &state.AgentMeta{Class: class, Failed: failed},
				Guard: state.GuardSkipped, Outcome: state.OutcomeExecutorError}); err != nil {
				t.Fatal(err)
			}
			rs := &state.RunState{ConsecutiveErrors: 2, InFlight: &state.InFlight{Iteration: 1, Node: "a", Phase: state.PhaseStarted, StartedAt: start}}
			if err := state.SaveRunState(p.RunState(), rs); err != nil {
				t.Fatal(err)
			}
			if _, err := Run(context.Background(), Options{Paths: p, MaxIterations: 1}); err != nil {
				t.Fatal(err)
			}
			got, err := state.LoadRunState(p.RunState())
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			if failed {
				want = 3
			}
			if got.ConsecutiveErrors != want || got.InFlight != nil {
				t.Errorf("consecutive_errors = %d (in_flight %+v), want %d", got.ConsecutiveErrors, got.InFlight, want)
			}
		})
	}
}

// TestCommitTreeKeepsConcurrentEdit checks the recording of an outcome
// into a tree.json a person saved after the runner read it: the outcome
// is applied to their version instead of overwriting it.
func TestCommitTreeKeepsConcurrentEdit(t *testing.T) {
	p := journalRepo(t)
	cfg := config.Default()
	r := &Runner{p: p, cfg: cfg, log: log.New(io.Discard)}
	read, err := r.loadTree()
	if err != nil {
		t.Fatal(err)
	}
	loaded := r.cache.trees.sum
	meta := &state.Meta{Iteration: 1, Node: "a", Attempt: 1, Outcome: state.OutcomeDone, AgentStatus: "done",
		Agent: &state.AgentMeta{Class: executor.ClassOK}}
	if err := os.MkdirAll(p.RunDir(1), 0o755); err != nil {
		t.Fatal(err)
	}
	r.applyOutcome(read, meta, new(*executor.Message))
	w := &treeWrite{r: r, ctx: context.Background(), meta: meta, t: read, loaded: loaded}
	if err := w.Prepare(); err != nil {
		t.Fatal(err)
	}
	// A person adds a task meanwhile.
	edited, err := tree.Load(p.Tree())
	if err != nil {
		t.Fatal(err)
	}
	edited.Root.Children = append(edited.Root.Children, &tree.Node{ID: "c", Title: "C, added by hand"})
	if err := tree.Save(p.Tree(), edited); err != nil {
		t.Fatal(err)
	}

	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	got, err := tree.Load(p.Tree())
	if err != nil {
		t.Fatal(err)
	}
	ix := tree.NewIndex(got)
	if ix.Node("c") == nil {
		t.Error("the person's new task c was overwritten")
	}
	if a := ix.Node("a"); a == nil || a.Status != tree.StatusDone {
		t.Errorf("node a = %+v, want the outcome (done) applied to the edited tree", a)
	}
	if left, _ := fsutil.RemoveTemps(p.Dir); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestResumeSamePidAnotherLife: a runner started again in a container is
// pid 1 each time. Its death while a works, after an earlier runner of
// pid 1 died while a worked, is a second death in a row and spends an
// attempt; the same life noted again is the same death, and spends none.
func TestResumeSamePidAnotherLife(t *testing.T) {
	for _, c := range []struct {
		life  string
		spent bool
	}{{"second-life", true}, {"first-life", false}} {
		t.Run(c.life, func(t *testing.T) {
			p := journalRepo(t)
			if err := state.SaveRunState(p.RunState(), &state.RunState{Iteration: 2, LastStatus: "interrupted",
				Deaths: []state.RunnerDeath{{RunnerPID: 1, Life: "first-life", Nodes: []string{"a"}}}}); err != nil {
				t.Fatal(err)
			}
			appendRecords(t, p, state.Record{Time: time.Now().UTC().Add(-time.Minute), Iteration: 3, Node: "a",
				Event: state.EventStarted, RunnerPID: 1, RunnerLife: c.life})
			agentLog(t, p, 3)
			if _, err := Run(context.Background(), Options{Paths: p, MaxIterations: 1}); err != nil {
				t.Fatal(err)
			}
			m, err := state.LoadMeta(p.RunDir(3))
			if err != nil {
				t.Fatal(err)
			}
			if m.Outcome != state.OutcomeInterrupted || m.NoAttempt == c.spent {
				t.Errorf("meta.json: outcome %q no_attempt %v, want interrupted, an attempt spent: %v", m.Outcome, m.NoAttempt, c.spent)
			}
			if m.RunnerDied != 1 || m.RunnerDiedLife != c.life {
				t.Errorf("meta.json: runner_died %d life %q, want 1 %q", m.RunnerDied, m.RunnerDiedLife, c.life)
			}
		})
	}
}
