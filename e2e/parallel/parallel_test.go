package parallel

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/e2e"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// TestCrashParallel kills `runner run` with parallel slots (SPEC §14,
// loop.parallel = 3) on a tree of independent tasks, whose agents take a
// while so that several slots are at work when the kill comes: at the
// git steps of an integration (just after the integrated commit object is
// made, just after the run branch moved), inside the state writes, and
// at random moments; sometimes the runner that resumes is killed too.
// Each task writes a file of its own; two tasks of each batch also append
// to a shared file, and conflict when worked on at once.
//
// After every kill the repository must be sound: each state file whole,
// at most one commit per task on the run branch and nothing else, no
// merge commit, each committed task's work there, `git fsck` clean, no
// guard failed, and only the tasks sharing a file conflicted. After
// every run that ends, and at the end, the work must be complete: every
// task done with exactly one commit, its files holding the lines of its
// done iteration, the checkout and every slot's worktree clean outside
// .runner/, nothing left in flight, no agent process left, and no two
// agents at work that may not be (crashSlotsEnv).
//
// The test logs its random seed; RUNNER_CRASH_SEED=N replays a run's
// choices (the timing of the kills still varies).
func TestCrashParallel(t *testing.T) { crashParallel(t, false) }

// TestCrashNight is TestCrashParallel on a night as people run them: the
// agent now and then hits a usage limit, and the run goes on with a
// fallback executor; a reviewer, slow like the agents, judges every task
// that says done (and now and then rejects it), while other slots' tasks
// land. The same checks hold after every kill, and at the end every task
// is done with one commit on the run branch.
func TestCrashNight(t *testing.T) { crashParallel(t, true) }

func crashParallel(t *testing.T, night bool) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	kills := 12
	if night {
		kills = 6 // more iterations per kill: reviews, limits
	}
	if testing.Short() {
		kills = 4
	}
	rng, seed := e2e.Seed(t)

	// Of each batch, the last two tasks also append to one shared file:
	// worked on at once, the second to land conflicts.
	const batch, shared = 6, 2
	slots := 3
	if night {
		slots = 4 // a night as people run it: four slots on two CPUs
	}
	agentEnv := []string{fmt.Sprintf("%s = \"%d\"", e2e.CrashSlotsEnv, slots), e2e.CrashSlowEnv + ` = "400"`, e2e.CrashSharedEnv + ` = "` + sharedFile + `"`}
	loopConf := fmt.Sprintf("parallel = %d\n", slots)
	if night {
		loopConf += "rate_limit_backoff = \"300ms\"\nrate_limit_backoff_max = \"1s\"\n"
	}
	r := e2e.NewRepo(t, e2e.FlatTree("par", batch, shared), loopConf+e2e.TaskGuard, append(agentEnv, e2e.CrashLimitsEnv+` = "1"`)[:len(agentEnv)+boolInt(night)]...)
	if night {
		r.AddNight(agentEnv)
	}
	r.Git("init", "-q", "-b", "main")
	r.Write("README", "the project\n")
	r.Git("add", "-A")
	r.Git("-c", "user.name=Person", "-c", "user.email=p@example.com", "commit", "-qm", "the project")
	pc := &parallelCheck{r: r, branch: "runner/par", base: "main", slots: slots, conflicts: map[int]bool{}}

	// Each failpoint with how many times it is reached in a run of a
	// batch, about: a kill at the N-th time lands anywhere in the run.
	type failAt struct {
		name string
		upTo int
	}
	points := []failAt{
		{"git:commit", batch}, {"git:advance", batch},
		{"rename:run_state.json", 8 * batch}, {"rename:tree.json", batch}, {"append:journal.jsonl", 8 * batch},
		// Right after the guards ran the agent's code, and while one of
		// the runner's git commands runs.
		{"guards:ran", batch}, {"gitcmd", 30 * batch},
	}
	// Aimed at the night's own moments: a review under way, a verdict not
	// yet recorded, the keep's sync while other slots work.
	aimed := []failAt{{"review:held", batch}, {"review:verdict", batch}, {"keep:sync", 2 * batch}}
	if night {
		points = append(points, aimed...)
	}
	runs := 0
	run := func(killAfter time.Duration, env []string) e2e.RunnerResult {
		runs++
		env = append(env, e2e.CrashRunEnv+"="+strconv.Itoa(runs))
		return r.RunRunner(e2e.RunLimit, killAfter, env, "run")
	}
	made, batches, chained := 0, 0, 0
	busy := map[int]int{} // kills by the number of iterations they left in flight
	for made < kills {
		var env []string
		delay := time.Duration(50+rng.IntN(1750)) * time.Millisecond
		switch {
		case night && made < len(aimed):
			// Each aimed point once, first, where it is surely reached.
			env = append(env, fmt.Sprintf("%s=%s@%d", fsutil.FailpointEnv, aimed[made].name, 1+rng.IntN(2)))
			delay = 0
		case rng.IntN(3) != 0:
			p := points[rng.IntN(len(points))]
			env = append(env, fmt.Sprintf("%s=%s@%d", fsutil.FailpointEnv, p.name, 1+rng.IntN(p.upTo)))
			delay = 0
		}
		res := run(delay, env)
		switch {
		case res.Killed:
			made++
			when := fmt.Sprintf("after kill %d (%v, %s)", made, env, delay)
			pc.check(when, false)
			rs, err := state.LoadRunState(r.Paths.RunState())
			if err != nil {
				t.Fatal(err)
			}
			busy[len(state.CurrentInFlights(r.Paths, rs))]++
			if made < kills && rng.IntN(3) == 0 {
				chained++
				continue // the next runner resumes this one's work, and is killed too
			}
			if res := run(0, nil); res.Code != 0 {
				t.Fatalf("the runner that resumed %s: %s", when, r.WhyExited(res, seed))
			}
			pc.check(when+" and a run to the end", true)
		case res.Code == 0:
			// The tree was complete before the kill came.
			pc.check(fmt.Sprintf("after a run that ended before its kill (%v, %s)", env, delay), true)
		default:
			t.Fatalf("the runner to be killed (%v, %s), want a kill or exit 0: %s", env, delay, r.WhyExited(res, seed))
		}
		if batches++; batches > 4*kills {
			t.Fatalf("%d batches of tasks added, and only %d kills made", batches, made)
		}
		e2e.AddFlatTasks(t, r, fmt.Sprintf("more%d", batches), batch, shared)
	}
	if res := run(0, nil); res.Code != 0 {
		t.Fatalf("the last runner: %s", r.WhyExited(res, seed))
	}
	commits := pc.check("after the last run", true)
	iterations, interrupted := r.CheckFinal()
	if want := batch * (1 + batches); commits != want {
		t.Errorf("the run branch holds %d task commits, want %d", commits, want)
	}
	if !testing.Short() {
		// What the test is for happened: kills while several slots were
		// at work, and conflicts.
		if busy[0]+busy[1] == made {
			t.Errorf("no kill came while two slots or more were at work (kills by iterations left in flight: %v)", busy)
		}
		if len(pc.conflicts) == 0 {
			t.Errorf("no task conflicted with another: the tasks sharing %s were never worked on at once", sharedFile)
		}
		if night {
			backup, reviewed := 0, 0
			for _, m := range r.CheckState("at the end").Metas {
				if m != nil && m.Executor == "backup" {
					backup++
				}
				if m != nil && m.Review != nil && m.Review.Verdict != "" {
					reviewed++
				}
			}
			if backup == 0 || reviewed == 0 {
				t.Errorf("the night did not happen: %d iterations on the fallback executor, %d reviewed", backup, reviewed)
			}
		}
	}
	t.Logf("%d kills (%d resumed by a runner killed too), %d runner processes, %d iterations (%d interrupted, %d conflicted), %d task commits; kills by iterations left in flight: %v",
		made, chained, runs, iterations, interrupted, len(pc.conflicts), commits, busy)
}

// boolInt is 1 for true.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sharedFile is the file the tasks whose id ends in "-s" all append to.
const sharedFile = "work/shared.txt"

// parallelCheck checks a repository the parallel runs work in.
type parallelCheck struct {
	r            *e2e.Repo
	branch, base string
	slots        int
	conflicts    map[int]bool // the iterations that conflicted
}

// taskCommit is a commit of the run branch, by its trailers.
type taskCommit struct {
	id, parents, node, iteration string
}

// check checks the repository after a runner ended (killed, when
// complete is false) and returns the number of task commits on the run
// branch. The test fails at once when something is wrong.
func (pc *parallelCheck) check(when string, complete bool) int {
	r, t := pc.r, pc.r.T
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: "+format, append([]any{when}, args...)...)
	}
	s := r.CheckState(when)

	// The run branch: task commits only, one per task, linear, on the
	// person's branch. A runner killed at its first git commands has not
	// made it yet.
	if _, err := e2e.GitIn(r.Root, "rev-parse", "-q", "--verify", "refs/heads/"+pc.branch); err != nil && !complete && len(s.Metas) == 0 {
		return 0
	}
	if out, err := e2e.GitIn(r.Root, "merge-base", "--is-ancestor", pc.base, pc.branch); err != nil {
		fail("the run branch %s does not descend from %s: %v\n%s", pc.branch, pc.base, err, out)
	}
	if merges := r.Git("rev-list", "--merges", pc.branch); merges != "" {
		fail("the run branch holds merge commits:\n%s", merges)
	}
	log := r.Git("log", "--format=%H%x1f%P%x1f%(trailers:key=Runner-Node,valueonly,separator=%x2C)%x1f%(trailers:key=Runner-Iteration,valueonly,separator=%x2C)%x1e",
		pc.branch, "^"+pc.base)
	byNode := map[string]taskCommit{}
	for _, rec := range strings.Split(log, "\x1e") {
		rec = strings.TrimSpace(rec)
		if rec == "" {
			continue
		}
		f := strings.Split(rec, "\x1f")
		if len(f) != 4 {
			fail("cannot read git log record %q", rec)
		}
		c := taskCommit{id: f[0], parents: f[1], node: f[2], iteration: f[3]}
		if c.node == "" || strings.Contains(c.node, ",") || c.iteration == "" || strings.Contains(c.iteration, ",") {
			fail("commit %s on the run branch has Runner-Node %q and Runner-Iteration %q, want one of each:\n%s", c.id, c.node, c.iteration, log)
		}
		if prev, ok := byNode[c.node]; ok {
			fail("task %s has two commits on the run branch, %s (iteration %s) and %s (iteration %s)", c.node, c.id, c.iteration, prev.id, prev.iteration)
		}
		byNode[c.node] = c
	}

	// Each task's work is on the run branch: its file, holding the line
	// its committed iteration's agent wrote.
	var paths []string
	for node := range byNode {
		paths = append(paths, "work/"+node+".txt")
	}
	files := catFiles(t, r.Root, pc.branch, append(paths, sharedFile))
	for node, c := range byNode {
		content, ok := files["work/"+node+".txt"]
		if !ok {
			fail("task %s has its commit %s on the run branch, but work/%s.txt is not there", node, c.id, node)
		}
		if !strings.Contains("\n"+content, "\niteration "+c.iteration+"\n") {
			fail("work/%s.txt on the run branch lacks the line of iteration %s, whose commit %s it is:\n%s", node, c.iteration, c.id, content)
		}
		if line := "iteration " + c.iteration + " of " + node + "\n"; strings.HasSuffix(node, "-s") && !strings.Contains(files[sharedFile], line) {
			fail("%s on the run branch lacks the line %q of task %s, whose commit %s it is:\n%s", sharedFile, line, node, c.id, files[sharedFile])
		}
	}

	// What the state says agrees with the run branch: a done iteration
	// records its task's commit there; a task done in the tree has one.
	conflictRecords := map[int]bool{}
	for _, rec := range s.Journal {
		if rec.Event == state.EventConflict {
			conflictRecords[rec.Iteration] = true
		}
	}
	for n, m := range s.Metas {
		if m != nil && m.Guard == state.GuardFail {
			// Every agent writes its task's file before it says done.
			fail("iteration %d (task %s, slot %d): the guards failed, where every agent makes them pass", n, m.Node, m.Slot)
		}
		if m != nil && m.Conflict != nil {
			// Only the tasks that share a file conflict, there.
			c := m.Conflict
			if c.Kind != "conflict" || !strings.HasSuffix(m.Node, "-s") || len(c.Files) != 1 || c.Files[0] != sharedFile {
				fail("iteration %d (task %s, slot %d) failed to integrate: %+v; only tasks ending in -s may conflict, in %s", n, m.Node, m.Slot, c, sharedFile)
			}
			if !conflictRecords[n] {
				fail("iteration %d (task %s) conflicted, but the journal has no conflict record of it", n, m.Node)
			}
			pc.conflicts[n] = true
		}
		if m == nil || m.Outcome != state.OutcomeDone {
			continue
		}
		c, ok := byNode[m.Node]
		if !ok || m.Checkpoint == nil || m.Checkpoint.Commit != c.id || c.iteration != strconv.Itoa(n) {
			fail("iteration %d (task %s) is recorded done with checkpoint %+v, but its commit on the run branch is %+v", n, m.Node, m.Checkpoint, c)
		}
	}
	leaves := 0
	e2e.WalkTree(s.Tree.Root, func(n *tree.Node) {
		if !n.IsLeaf() {
			return
		}
		leaves++
		if n.Status == tree.StatusDone {
			if _, ok := byNode[n.ID]; !ok {
				fail("task %s is done in tree.json but has no commit on the run branch", n.ID)
			}
		} else if complete {
			fail("task %s is %q after a run that ended, want done", n.ID, n.Status)
		}
	})
	if out, err := e2e.GitIn(r.Root, "fsck", "--no-progress", "--no-dangling"); err != nil || out != "" {
		fail("git fsck: %v\n%s", err, out)
	}
	if !complete {
		return len(byNode)
	}

	if len(byNode) != leaves {
		fail("the run branch holds commits of %d tasks, the tree %d tasks", len(byNode), leaves)
	}
	if fl := s.RS.Flights(); len(fl) > 0 {
		fail("run_state.json holds iterations in flight after a run that ended: in_flight %+v, in_flight_more %+v", s.RS.InFlight, s.RS.MoreInFlight)
	}
	if head := r.Git("symbolic-ref", "HEAD"); head != "refs/heads/"+pc.branch {
		fail("the checkout is on %s, want the run branch", head)
	}
	if st := r.Git("status", "--porcelain", "--", ".", ":!.runner"); st != "" {
		fail("the checkout holds changes outside .runner/:\n%s", st)
	}
	for _, wt := range pc.slotWorktrees(fail) {
		out, err := e2e.GitIn(wt, "status", "--porcelain", "--", ".", ":!.runner")
		if err != nil || out != "" {
			fail("the slot worktree %s holds changes outside .runner/ (%v):\n%s", wt, err, out)
		}
	}
	if left := r.WaitNoAgents(10 * time.Second); len(left) > 0 {
		fail("agent processes survived the run: %v", left)
	}
	if o := r.Overlaps(); o != "" {
		fail("agents that may not work at once did:\n%s", o)
	}
	return len(byNode)
}

// slotWorktrees returns the linked worktrees of the repository, each
// checked to be a slot's: beside the checkout, detached, at most one per
// slot.
func (pc *parallelCheck) slotWorktrees(fail func(string, ...any)) []string {
	list := pc.r.Git("worktree", "list", "--porcelain")
	root, err := filepath.EvalSymlinks(pc.r.Root)
	if err != nil {
		fail("%v", err)
	}
	var out []string
	for _, block := range strings.Split(list, "\n\n") {
		var path string
		detached := false
		for _, line := range strings.Split(block, "\n") {
			if p, ok := strings.CutPrefix(line, "worktree "); ok {
				path = p
			}
			detached = detached || line == "detached"
		}
		if path == "" {
			continue
		}
		if real, err := filepath.EvalSymlinks(path); err == nil && real == root {
			continue // the checkout
		}
		if !strings.HasPrefix(path, root+".runner-worktrees"+string(filepath.Separator)) {
			fail("worktree %s is not beside the checkout in %s.runner-worktrees:\n%s", path, root, list)
		}
		if !detached {
			fail("the slot worktree %s is not detached:\n%s", path, list)
		}
		out = append(out, path)
	}
	if len(out) > pc.slots {
		fail("%d slot worktrees, for %d slots:\n%s", len(out), pc.slots, list)
	}
	return out
}

// catFiles returns the content of each of paths in commit rev, those it
// does not have left out, in one `git cat-file --batch`.
func catFiles(t testing.TB, dir, rev string, paths []string) map[string]string {
	t.Helper()
	var in bytes.Buffer
	for _, p := range paths {
		fmt.Fprintf(&in, "%s:%s\n", rev, p)
	}
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = dir
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git cat-file --batch: %v", err)
	}
	files := map[string]string{}
	br := bufio.NewReader(bytes.NewReader(out))
	for _, p := range paths {
		header, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("git cat-file --batch: %v (output %q)", err, out)
		}
		f := strings.Fields(header)
		if len(f) != 3 {
			continue // "<rev:path> missing"
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			t.Fatalf("git cat-file --batch: header %q", header)
		}
		content := make([]byte, size+1) // and its newline
		if _, err := io.ReadFull(br, content); err != nil {
			t.Fatalf("git cat-file --batch: %v", err)
		}
		files[p] = string(content[:size])
	}
	return files
}
