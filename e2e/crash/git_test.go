package crash

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/e2e"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// TestCrashGitCheckpoints kills `runner run` in a git repository around
// the commit phase of SPEC §12: just after a task's commit object is made
// (the run branch not moved yet), just after the branch moved (the outcome
// not recorded yet), inside the state writes, and at random moments. The
// next runner must end with exactly one commit per task on the run branch,
// a repository `git fsck` finds sound, and a clean working tree.
//
// It runs twice: in place (the agent works in the checkout), and as runs
// are made by default, in the run branch's worktree with the agent and
// the guards confined by Landlock (sandbox.mode = "required"), where the
// checkout must also stay on the person's branch, untouched.
func TestCrashGitCheckpoints(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Run("in_place", func(t *testing.T) { crashGitCheckpoints(t, false) })
	t.Run("worktree_confined", func(t *testing.T) {
		if _, err := sandbox.ABI(); err != nil {
			t.Skipf("Landlock is not available here (%v): the confined run cannot start", err)
		}
		crashGitCheckpoints(t, true)
	})
}

func crashGitCheckpoints(t *testing.T, confined bool) {
	kills := 12
	if confined {
		kills = 8
	}
	if testing.Short() {
		kills = 4
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	const tasks = 6
	r := e2e.NewRepo(t, e2e.ChainTree("crash", tasks), crashGuard)
	if confined {
		r.InWorktreeConfined()
	}
	r.Git("init", "-q", "-b", "main")
	r.Write("README", "the project\n")
	r.Write(".gitignore", ".runner/runs/\n.runner/context/\n.runner/state/\n.runner/lock\n")
	r.Git("add", "-A")
	r.Git("-c", "user.name=Person", "-c", "user.email=p@example.com", "commit", "-qm", "the project")
	personHead := r.Git("rev-parse", "HEAD")

	points := []string{"git:commit", "git:advance", "rename:run_state.json", "rename:tree.json", "append:journal.jsonl", "guards:ran", "gitcmd"}
	made, batches := 0, 0
	for made < kills {
		var env []string
		delay := time.Duration(200+rng.IntN(600)) * time.Millisecond
		if rng.IntN(4) != 0 {
			point := points[rng.IntN(len(points))]
			upTo := 3
			if point == "gitcmd" {
				upTo = 60 // dozens of git commands a task
			}
			fp := point + "@" + strconv.Itoa(1+rng.IntN(upTo))
			env = append(env, fsutil.FailpointEnv+"="+fp)
			delay = 0
		}
		res := r.RunRunner(e2e.RunLimit, delay, env, "run")
		switch {
		case res.Killed:
			made++
			r.CheckState(fmt.Sprintf("after kill %d (%v, %s)", made, env, delay))
		case res.Code == 0:
			// The tree is complete before the failpoint was reached: more work.
			if batches++; batches > 4*kills {
				t.Fatalf("%d runs ended without reaching a kill point", batches)
			}
			addTasks(t, r, fmt.Sprintf("more%d", batches), 2)
		default:
			t.Fatalf("runner exit %d (%v):\n%s", res.Code, env, res.Out)
		}
	}
	if res := r.RunRunner(e2e.RunLimit, 0, nil, "run"); res.Code != 0 {
		t.Fatalf("the last runner: exit %d:\n%s", res.Code, res.Out)
	}
	r.CheckFinal()
	s := r.CheckState("after the last run")

	tr, err := tree.Load(r.Paths.Tree())
	if err != nil {
		t.Fatal(err)
	}
	commits := map[string]int{}
	onBranch := map[string]string{} // commit → its task
	log := r.Git("log", "--format=%H %(trailers:key=Runner-Node,valueonly,separator=%x2C)", "runner/crash", "^main")
	for _, line := range strings.Split(log, "\n") {
		id, node, _ := strings.Cut(line, " ")
		commits[node]++
		onBranch[id] = node
	}
	// Each done iteration records the commit its task has on the branch,
	// the one made before a kill included.
	for n, m := range s.Metas {
		if m == nil || m.Outcome != state.OutcomeDone {
			continue
		}
		if m.Checkpoint == nil || onBranch[m.Checkpoint.Commit] != m.Node {
			t.Errorf("iteration %d (task %s, done) records checkpoint %+v, not its commit on the run branch", n, m.Node, m.Checkpoint)
		}
	}
	tr.Walk(func(n *tree.Node) {
		if !n.IsLeaf() {
			return
		}
		if n.Status != tree.StatusDone {
			t.Errorf("task %s is %q after the last run, want done", n.ID, n.Status)
		}
		if commits[n.ID] != 1 {
			t.Errorf("task %s has %d commits on the run branch, want exactly one:\n%s", n.ID, commits[n.ID], log)
		}
	})
	if want := tasks + 2*batches; len(commits) != want {
		t.Errorf("the run branch holds commits of %d tasks, want %d: %v", len(commits), want, commits)
	}
	fsck := exec.Command("git", "fsck", "--no-progress", "--no-dangling")
	fsck.Dir = r.Root
	if out, err := fsck.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
	work := r.Root
	if confined {
		work = r.Worktree("runner/crash")
		if head, st := r.Git("symbolic-ref", "HEAD"), r.Git("status", "--porcelain", "--untracked-files=all", "--", ".", ":!.runner"); head != "refs/heads/main" || st != "" {
			t.Errorf("the checkout moved: HEAD %s, status:\n%s", head, st)
		}
		if main := r.Git("rev-parse", "main"); main != personHead {
			t.Errorf("the person's branch main moved from %s to %s", personHead, main)
		}
		for n, m := range s.Metas {
			if m != nil && m.Unconfined != "" {
				t.Errorf("iteration %d ran unconfined: %s", n, m.Unconfined)
			}
		}
	}
	if st, err := e2e.GitIn(work, "status", "--porcelain", "--", ".", ":!.runner"); err != nil || st != "" {
		t.Errorf("the working tree %s holds changes after the run (%v):\n%s", work, err, st)
	}
	t.Logf("%d kills, %d task batches added, %d task commits", made, batches, len(commits))
}
