package crash

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/e2e"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// The crash tests check SPEC §8's promise end to end, against the real
// command line run as a separate process and killed with SIGKILL: every
// agent attempt runs at least once, every result is recorded exactly once,
// no state file is ever torn, no temporary file is left, and no agent
// process outlives its runner's successor. The agent is the crash agent
// (crash_agent_test.go); the checks are in crash_helpers_test.go.
//
// RUNNER_CRASH_KILLS sets how many kills TestCrashRandomKills makes
// (default 16, 4 with -short); raise it for a long run:
//
//	RUNNER_CRASH_KILLS=1000 go test -run TestCrashRandomKills -timeout 2h -v ./e2e/crash
//
// The test logs its random seed; RUNNER_CRASH_SEED=N replays a run's
// choices (the timing of the kills still varies).
const crashKillsEnv = "RUNNER_CRASH_KILLS"

const crashGuard = `
[[guard]]
name = "work"
run = "test -d work"
timeout = "30s"
`

// TestCrashAtEveryWrite kills `runner run` inside each durable write of a
// whole iteration in turn (with the failpoint hook, RUNNER_FAILPOINT=*@N:
// a half-written temporary file, a rename not yet made durable, a torn
// journal line), checks that every state file still parses, then lets a
// new runner finish and checks that the iteration was recorded exactly
// once. The sweep ends at the first N past the run's last write.
//
// The same sweep is then made over a runner that is resolving an
// iteration a killed runner left in each phase (started, agent_done,
// guards_done): the recovery itself is killed at every write.
func TestCrashAtEveryWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a few hundred runner processes")
	}
	preludes := []struct {
		name     string
		guards   string // [[guard]] config
		failAt   string // failpoints of the first runs, one run each, which leave the iteration in flight
		phase    string // the phase it must leave
		minKills int    // write points the sweep must find, at the least
		// hold keeps the agents of the first runs at work, printing
		// nothing, until their runner is killed: their supervisor stops
		// them (an agent that prints after its runner died may die of the
		// broken pipe first, and count as finished).
		hold bool
	}{
		{"first run", crashGuard, "", "", 20, false},
		{"first run without guards", "", "", "", 15, false},
		{"resume started", crashGuard, "rename:run_state.json@1", state.PhaseStarted, 8, false},
		// Killed while writing the in-flight marker to run_state.json: only
		// the journal's started record knows the iteration.
		{"resume started from the journal", crashGuard, "temp:run_state.json@1", startedInJournalOnly, 8, false},
		{"resume agent_done", crashGuard, "rename:run_state.json@2", state.PhaseAgentDone, 8, false},
		{"resume guards_done", crashGuard, "rename:run_state.json@3", state.PhaseGuardsDone, 8, false},
		// Two deaths while the agent works, the second known to the
		// journal only: its iteration spends an attempt (the task was at
		// work at the death before), which the resuming runner records in
		// tree.json before it saves the run state.
		{"resume a second death from the journal", crashGuard, "rename:run_state.json@1 temp:run_state.json@2", startedInJournalOnly, 8, true},
	}
	for _, pre := range preludes {
		t.Run(pre.name, func(t *testing.T) {
			kills := sweepWrites(t, pre.guards, pre.failAt, pre.phase, pre.hold)
			t.Logf("killed the runner at %d distinct write points", kills)
			if kills < pre.minKills {
				t.Errorf("only %d write points; the failpoint hook is not reached", kills)
			}
		})
	}
}

// startedInJournalOnly is the phase of a prelude that must leave an
// iteration known only by its started record in the journal.
const startedInJournalOnly = "started (journal only)"

// sweepWrites runs the sweep: for N = 1, 2, ... a fresh repository with
// one task and the given guards, a run killed at each failpoint of failAt
// (space-separated; none when empty), which must leave the iteration in
// phase (their agents held at work with hold), a run killed at its N-th
// write point, and a last run that must finish. It returns the number of
// kills made.
func sweepWrites(t *testing.T, guards, failAt, phase string, hold bool) int {
	const wave = 4 // cases run side by side
	var (
		mu       sync.Mutex
		finished bool // a case ran to the end without reaching its kill point
		kills    int
	)
	for first := 1; !finished; first += wave {
		if first > 400 {
			t.Fatal("the sweep did not reach the end of the run after 400 kill points")
		}
		t.Run(fmt.Sprintf("points %d-%d", first, first+wave-1), func(t *testing.T) {
			for n := first; n < first+wave; n++ {
				t.Run(strconv.Itoa(n), func(t *testing.T) {
					t.Parallel()
					agentEnv := []string{e2e.CrashSteadyEnv + ` = "1"`}
					held := filepath.Join(t.TempDir(), "hold")
					if hold {
						if err := os.WriteFile(held, nil, 0o644); err != nil {
							t.Fatal(err)
						}
						agentEnv = append(agentEnv, e2e.CrashHoldEnv+" = "+e2e.TomlString(held))
					}
					r := e2e.NewRepo(t, `{"version": 1, "root": {"id": "job", "title": "Job", "children": [
  {"id": "only", "title": "The only task"}]}}`, guards, agentEnv...)
					if failAt != "" {
						var res e2e.RunnerResult
						for _, fp := range strings.Fields(failAt) {
							if res = r.RunRunner(e2e.RunLimit, 0, []string{fsutil.FailpointEnv + "=" + fp}, "run"); !res.Killed {
								t.Fatalf("the run with %s=%s was not killed (exit %d):\n%s", fsutil.FailpointEnv, fp, res.Code, res.Out)
							}
						}
						os.Remove(held)
						s := r.CheckState("after the kills of " + failAt)
						left := s.RS.InFlight != nil && s.RS.InFlight.Phase == phase
						if phase == startedInJournalOnly {
							rec, err := state.UnfinishedStart(r.Paths.Journal())
							left = err == nil && rec != nil && s.RS.InFlight == nil
						}
						if !res.Killed || !left {
							t.Fatalf("the run with %s=%s left in_flight %+v (killed %v), want phase %s:\n%s",
								fsutil.FailpointEnv, failAt, s.RS.InFlight, res.Killed, phase, res.Out)
						}
					}
					fp := fsutil.FailpointEnv + "=*@" + strconv.Itoa(n)
					res := r.RunRunner(e2e.RunLimit, 0, []string{fp}, "run")
					kept := 0 // an iteration whose agent's result was saved when the runner died
					switch {
					case res.Killed:
						mu.Lock()
						kills++
						mu.Unlock()
						s := r.CheckState(fmt.Sprintf("killed at write point %d", n))
						if in := s.RS.InFlight; in != nil {
							if m := s.Metas[in.Iteration]; m != nil && (m.Phase == state.PhaseAgentDone || m.Phase == state.PhaseGuardsDone ||
								(m.Phase == state.PhaseRecorded && m.Outcome != state.OutcomeInterrupted)) {
								kept = in.Iteration
							}
						}
					case res.Code == 0:
						mu.Lock()
						finished = true
						mu.Unlock()
					default:
						t.Fatalf("runner with %s: exit %d, want a kill or 0:\n%s\nprocesses with the lock file open:\n%s", fp, res.Code, res.Out, e2e.LockHolders(r.Paths.Lock()))
					}
					if res := r.RunRunner(e2e.RunLimit, 0, nil, "run"); res.Code != 0 {
						t.Fatalf("the runner after the kill at point %d: exit %d:\n%s\nprocesses with the lock file open:\n%s", n, res.Code, res.Out, e2e.LockHolders(r.Paths.Lock()))
					}
					r.CheckFinal()
					if kept > 0 {
						// The agent's saved result is used, never thrown away.
						if m, err := state.LoadMeta(r.Paths.RunDir(kept)); err != nil || m.Outcome == state.OutcomeInterrupted {
							t.Errorf("iteration %d had its agent's result saved when the runner died, yet was recorded as %v (%v)", kept, m, err)
						}
					}
				})
			}
		})
		if t.Failed() {
			break
		}
	}
	return kills
}

// TestCrashRandomKills runs `runner run` on a multi-node tree and kills it
// with SIGKILL at random moments, half of the time at a random write point
// (the failpoint hook) and otherwise after a random delay, including
// while it resumes from the previous kill. Between kills every state file
// must parse. When the tree is complete before all kills are made, more
// tasks are added. At the end a runner finishes the work and every
// iteration must be recorded exactly once.
func TestCrashRandomKills(t *testing.T) {
	want := 16
	if v := os.Getenv(crashKillsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", crashKillsEnv, v)
		}
		want = n
	}
	if testing.Short() && want > 4 {
		want = 4
	}
	rng, _ := e2e.Seed(t)

	// The agent sometimes hits a rate limit: kills also land while the
	// runner waits it out, which must cost no attempt.
	limits := "rate_limit_backoff = \"150ms\"\nrate_limit_backoff_max = \"300ms\"\n"
	r := e2e.NewRepo(t, e2e.ChainTree("crash", 8), limits+crashGuard, e2e.CrashLimitsEnv+` = "1"`)
	start := time.Now()
	kills, failpointKills, batches := 0, 0, 0
	points := []string{fsutil.FailTemp, fsutil.FailRename, fsutil.FailAppend}
	files := map[string][]string{
		fsutil.FailTemp:   {"", "run_state.json", "tree.json", "meta.json", "output.json"},
		fsutil.FailRename: {"", "run_state.json", "tree.json", "meta.json"},
		fsutil.FailAppend: {"", "journal.jsonl", "assumptions.md"},
	}
	for kills < want {
		var env []string
		delay := time.Duration(rng.IntN(400)) * time.Millisecond
		if rng.IntN(2) == 0 {
			point := points[rng.IntN(len(points))]
			fp := point
			if f := files[point][rng.IntN(len(files[point]))]; f != "" {
				fp += ":" + f
			}
			fp += "@" + strconv.Itoa(1+rng.IntN(6))
			env = append(env, fsutil.FailpointEnv+"="+fp)
			delay += 400 * time.Millisecond // a point not reached still ends in a kill
		}
		res := r.RunRunner(e2e.RunLimit, delay, env, "run")
		switch {
		case res.Killed:
			kills++
			if res.Took < delay {
				failpointKills++
			}
			r.CheckState(fmt.Sprintf("after kill %d (%v, %s)", kills, env, delay))
		case res.Code == 0:
			// The tree is complete: give it more work.
			batches++
			addTasks(t, r, fmt.Sprintf("more%d", batches), 4)
		default:
			t.Fatalf("runner exit %d after %s (%v), want a kill or 0:\n%s\nprocesses with the lock file open:\n%s", res.Code, res.Took, env, res.Out, e2e.LockHolders(r.Paths.Lock()))
		}
	}
	if res := r.RunRunner(e2e.RunLimit, 0, nil, "run"); res.Code != 0 {
		t.Fatalf("the last runner: exit %d:\n%s", res.Code, res.Out)
	}
	iterations, interrupted := r.CheckFinal()
	t.Logf("%d kills (%d inside a state write), %d iterations, %d interrupted, %d task batches added, %s",
		kills, failpointKills, iterations, interrupted, batches, time.Since(start).Round(time.Second))
}

// addTasks adds a group of n chained tasks to the repository's tree, as a
// person would while no runner runs.
func addTasks(t *testing.T, r *e2e.Repo, id string, n int) {
	t.Helper()
	tr, err := tree.Load(r.Paths.Tree())
	if err != nil {
		t.Fatal(err)
	}
	more, err := tree.Parse("more.json", []byte(e2e.ChainTree(id, n)))
	if err != nil {
		t.Fatal(err)
	}
	tr.Root.Children = append(tr.Root.Children, more.Root.Children...)
	if err := tree.Save(r.Paths.Tree(), tr); err != nil {
		t.Fatal(err)
	}
}
