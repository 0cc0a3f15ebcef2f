package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// Snapshot is every state file of a repository, each checked to
// parse.
type Snapshot struct {
	Tree    *tree.Tree
	RS      *state.RunState
	Journal []state.Record
	Metas   map[int]*state.Meta // by iteration; nil: the run folder has no meta.json
	Temps   []string            // temporary files left by atomic writes
}

// CheckState reads every state file and fails the test when one does not
// parse: a crash at any instant must leave each one whole.
func (r *Repo) CheckState(when string) *Snapshot {
	r.T.Helper()
	fail := func(format string, args ...any) {
		r.T.Helper()
		r.T.Fatalf("%s: "+format, append([]any{when}, args...)...)
	}
	s := &Snapshot{Metas: map[int]*state.Meta{}}
	var err error
	if s.Tree, err = tree.Load(r.Paths.Tree()); err != nil {
		fail("tree.json: %v", err)
	}
	if s.RS, err = state.LoadRunState(r.Paths.RunState()); err != nil {
		fail("run_state.json: %v", err)
	}
	if s.Journal, err = state.ReadJournal(r.Paths.Journal()); err != nil {
		fail("journal: %v", err)
	}
	for _, notes := range []string{r.Paths.Assumptions(), r.Paths.Questions()} {
		if _, err := fsutil.ReadLimited(notes, 16<<20, true); err != nil && !errors.Is(err, os.ErrNotExist) {
			fail("%v", err)
		}
	}
	entries, err := os.ReadDir(r.Paths.RunsDir())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		fail("%v", err)
	}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() {
			continue
		}
		dir := filepath.Join(r.Paths.RunsDir(), e.Name())
		m, err := state.LoadMeta(dir)
		switch {
		case errors.Is(err, os.ErrNotExist):
			s.Metas[n] = nil
		case err != nil:
			fail("run %d: %v", n, err)
		default:
			s.Metas[n] = m
		}
		if data, err := os.ReadFile(filepath.Join(dir, "output.json")); err == nil {
			if _, err := executor.ParseMessage(data); err != nil {
				fail("run %d: output.json: %v", n, err)
			}
		}
		if data, err := os.ReadFile(filepath.Join(dir, "context.json")); err == nil && !json.Valid(data) {
			fail("run %d: context.json is not valid JSON", n)
		}
	}
	filepath.WalkDir(r.Paths.Dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), fsutil.TempPrefix) {
			s.Temps = append(s.Temps, r.Paths.Rel(path))
		}
		return nil
	})
	// Only an iteration in flight may lack its meta.json: one of
	// run_state.json's in-flight markers, or one whose started record the
	// journal holds unanswered (it reaches run_state.json moments later;
	// with parallel slots there may be several of each).
	unfinished, err := state.UnfinishedStarts(r.Paths.Journal(), 0)
	if err != nil {
		fail("%v", err)
	}
	for n, m := range s.Metas {
		inFlight := s.RS.Flight(n) != nil || slices.ContainsFunc(unfinished, func(rec state.Record) bool { return rec.Iteration == n })
		if m == nil && !inFlight {
			fail("run %d has no meta.json and is not in flight (in flight %v, unfinished started records %+v)", n, flightNumbers(s.RS), unfinished)
		}
	}
	return s
}

// CheckFinal checks a finished run: nothing in flight, no temporary file,
// every leaf done, and every iteration recorded exactly once, consistently
// in the journal, its meta.json, the tree's attempts and the notes. It
// returns the number of iterations and of interrupted iterations.
func (r *Repo) CheckFinal() (iterations, interrupted int) {
	r.T.Helper()
	s := r.CheckState("after the last run")
	t := r.T
	if s.RS.InFlight != nil || len(s.RS.MoreInFlight) > 0 {
		t.Errorf("iterations %v in flight after a complete run, want in_flight null and no in_flight_more", flightNumbers(s.RS))
	}
	if len(s.Temps) > 0 {
		t.Errorf("temporary files left: %v", s.Temps)
	}

	// The journal: one started and one final record per iteration, in
	// increasing order of iteration.
	type perIter struct {
		started, final int
		rec            state.Record
	}
	iters := map[int]*perIter{}
	last := 0
	for _, rec := range s.Journal {
		if rec.Iteration == 0 {
			continue
		}
		it := iters[rec.Iteration]
		if it == nil {
			if rec.Iteration < last {
				t.Errorf("journal: iteration %d appears after iteration %d: numbers are reused", rec.Iteration, last)
			}
			last = rec.Iteration
			it = &perIter{}
			iters[rec.Iteration] = it
		}
		switch rec.Event {
		case state.EventStarted:
			it.started++
		case state.EventRecorded, state.EventInterrupted, state.EventAborted:
			it.final++
			it.rec = rec
		}
	}
	for n, m := range s.Metas {
		it := iters[n]
		if it == nil || it.final != 1 {
			t.Errorf("run %d: want exactly one recorded/interrupted journal record, got %+v", n, it)
			continue
		}
		if it.started > 1 {
			t.Errorf("run %d: %d started records", n, it.started)
		}
		if m == nil || (m.Phase != state.PhaseRecorded && m.Phase != state.PhaseAborted) {
			t.Errorf("run %d: meta.json not recorded: %+v", n, m)
			continue
		}
		if m.Outcome != it.rec.Outcome || m.Node != it.rec.Node {
			t.Errorf("run %d: meta.json says %s/%s, the journal %s/%s", n, m.Node, m.Outcome, it.rec.Node, it.rec.Outcome)
		}
	}
	for n, it := range iters {
		if _, ok := s.Metas[n]; !ok {
			t.Errorf("journal iteration %d has no run folder", n)
		}
		if it.final > 1 {
			t.Errorf("iteration %d recorded %d times", n, it.final)
		}
	}
	if max := maxKey(s.Metas); s.RS.Iteration != max {
		t.Errorf("run_state.iteration = %d, want the last run %d", s.RS.Iteration, max)
	}

	// Per node: done exactly once, attempts = iterations that spent one.
	spent := map[string]int{}
	doneRecords := map[string]int{}
	notes, _ := os.ReadFile(r.Paths.Assumptions())
	for n, it := range iters {
		rec := it.rec
		switch rec.Outcome {
		case state.OutcomeInterrupted:
			if !rec.NoAttempt { // a runner's death spares a task not at work at the one before
				spent[rec.Node]++
			}
		case state.OutcomeRetry, state.OutcomeExecutorError, state.OutcomeGuardFailed, state.OutcomeRejected:
			spent[rec.Node]++
		case state.OutcomeDone:
			doneRecords[rec.Node]++
		}
		if rec.Outcome == state.OutcomeInterrupted {
			interrupted++
		}
		want := 1 // every message holds these two assumptions
		if rec.Outcome == state.OutcomeInterrupted || rec.Outcome == state.OutcomeExecutorError || rec.Event == state.EventAborted {
			want = 0
		}
		for _, which := range []string{"one", "two"} {
			line := fmt.Sprintf("- [iteration %d, node %s] crash agent assumption %s\n", n, rec.Node, which)
			if got := bytes.Count(notes, []byte(line)); got != want {
				t.Errorf("assumptions.md holds %q %d times, want %d (outcome %s)", line, got, want, rec.Outcome)
			}
		}
	}
	ix := tree.NewIndex(s.Tree)
	WalkTree(s.Tree.Root, func(n *tree.Node) {
		if !n.IsLeaf() {
			return
		}
		if n.EffectiveStatus() != tree.StatusDone {
			t.Errorf("node %s is %s, want done", ix.Path(n.ID), n.EffectiveStatus())
		}
		if doneRecords[n.ID] != 1 {
			t.Errorf("node %s recorded done %d times, want once", n.ID, doneRecords[n.ID])
		}
		if n.Attempts != spent[n.ID] {
			t.Errorf("node %s has attempts %d, but %d iterations spent one", n.ID, n.Attempts, spent[n.ID])
		}
	})

	// The agent ran at most once per iteration: a recorded result is
	// never run again. An iteration set aside without an attempt
	// (aborted: the runner stopped before its agent started) had none.
	seen := map[int]int{}
	for _, a := range r.AgentStarts() {
		if a.Role != "agent" {
			continue
		}
		if it := iters[a.Iteration]; it != nil && it.rec.Event == state.EventAborted {
			t.Errorf("iteration %d was set aside as if no agent had run (%s), but its agent ran", a.Iteration, it.rec.Error)
		}
		if seen[a.Iteration]++; seen[a.Iteration] > 1 {
			t.Errorf("iteration %d ran the agent twice", a.Iteration)
		}
		if _, ok := s.Metas[a.Iteration]; !ok {
			t.Errorf("the agent ran for iteration %d, which has no run folder", a.Iteration)
		}
	}
	// Only an agent at work when the runner stopped costs an attempt: an
	// iteration interrupted while its only agent runs had hit a rate limit
	// was stopped during the wait, and must not have been charged.
	limited := map[int]bool{}
	for _, a := range r.AgentStarts() {
		if a.Role == "limited" {
			limited[a.Iteration] = true
		}
	}
	for n, it := range iters {
		if it.rec.Outcome != state.OutcomeInterrupted || !limited[n] || seen[n] > 0 {
			continue
		}
		// The agent's exit record says whether its last run ended by
		// itself (then nothing was working when the runner stopped) or was
		// stopped at the runner's death, maybe before it could log its
		// start (a test binary takes a while), or after it logged
		// "limited" and before it exited: then an attempt is rightly
		// spent. Without a record the runner had not got as far as
		// starting an agent again.
		ex, err := proc.ReadExitRecord(filepath.Join(r.Paths.RunDir(n), executor.ExitFileName))
		if err != nil || ex.Stopped {
			continue
		}
		log, _ := os.ReadFile(filepath.Join(r.Paths.RunDir(n), "executor.log"))
		{
			meta, _ := os.ReadFile(filepath.Join(r.Paths.RunDir(n), "meta.json"))
			t.Errorf("iteration %d was charged as interrupted, but its only agent run had ended on a rate limit: no agent was working\nexecutor.log:\n%s\nmeta.json:\n%s", n, log, meta)
		}
	}
	if o := r.Overlaps(); o != "" {
		t.Errorf("two agents worked at once:\n%s", o)
	}
	if left := r.WaitNoAgents(10 * time.Second); len(left) > 0 {
		t.Errorf("agent processes survived: %v", left)
	}
	return len(iters), interrupted
}

// flightNumbers are the iterations run_state.json marks in flight.
func flightNumbers(rs *state.RunState) []int {
	var ns []int
	for _, f := range rs.Flights() {
		ns = append(ns, f.Iteration)
	}
	return ns
}

func maxKey[V any](m map[int]V) int {
	max := 0
	for k := range m {
		if k > max {
			max = k
		}
	}
	return max
}
