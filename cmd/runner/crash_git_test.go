package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
	r := newCrashRepo(t, chainTree("crash", tasks), crashGuard)
	if confined {
		r.inWorktreeConfined()
	}
	r.git("init", "-q", "-b", "main")
	r.write("README", "the project\n")
	r.write(".gitignore", ".runner/runs/\n.runner/context/\n.runner/state/\n.runner/lock\n")
	r.git("add", "-A")
	r.git("-c", "user.name=Person", "-c", "user.email=p@example.com", "commit", "-qm", "the project")
	personHead := r.git("rev-parse", "HEAD")

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
		res := r.runRunner(runLimit, delay, env, "run")
		switch {
		case res.killed:
			made++
			r.checkState(fmt.Sprintf("after kill %d (%v, %s)", made, env, delay))
		case res.code == 0:
			// The tree is complete before the failpoint was reached: more work.
			if batches++; batches > 4*kills {
				t.Fatalf("%d runs ended without reaching a kill point", batches)
			}
			addTasks(t, r, fmt.Sprintf("more%d", batches), 2)
		default:
			t.Fatalf("runner exit %d (%v):\n%s", res.code, env, res.out)
		}
	}
	if res := r.runRunner(runLimit, 0, nil, "run"); res.code != 0 {
		t.Fatalf("the last runner: exit %d:\n%s", res.code, res.out)
	}
	r.checkFinal()
	s := r.checkState("after the last run")

	tr, err := tree.Load(r.p.Tree())
	if err != nil {
		t.Fatal(err)
	}
	commits := map[string]int{}
	onBranch := map[string]string{} // commit → its task
	log := r.git("log", "--format=%H %(trailers:key=Runner-Node,valueonly,separator=%x2C)", "runner/crash", "^main")
	for _, line := range strings.Split(log, "\n") {
		id, node, _ := strings.Cut(line, " ")
		commits[node]++
		onBranch[id] = node
	}
	// Each done iteration records the commit its task has on the branch,
	// the one made before a kill included.
	for n, m := range s.metas {
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
	fsck.Dir = r.root
	if out, err := fsck.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
	work := r.root
	if confined {
		work = r.worktree("runner/crash")
		if head, st := r.git("symbolic-ref", "HEAD"), r.git("status", "--porcelain", "--untracked-files=all", "--", ".", ":!.runner"); head != "refs/heads/main" || st != "" {
			t.Errorf("the checkout moved: HEAD %s, status:\n%s", head, st)
		}
		if main := r.git("rev-parse", "main"); main != personHead {
			t.Errorf("the person's branch main moved from %s to %s", personHead, main)
		}
		for n, m := range s.metas {
			if m != nil && m.Unconfined != "" {
				t.Errorf("iteration %d ran unconfined: %s", n, m.Unconfined)
			}
		}
	}
	if st, err := gitIn(work, "status", "--porcelain", "--", ".", ":!.runner"); err != nil || st != "" {
		t.Errorf("the working tree %s holds changes after the run (%v):\n%s", work, err, st)
	}
	t.Logf("%d kills, %d task batches added, %d task commits", made, batches, len(commits))
}

// inWorktreeConfined makes the repository's runs work as runs do by
// default, in the run branch's worktree, with the agent and the guards
// confined (sandbox.mode = "required"); the crash agent's log folder is
// writable.
func (r *crashRepo) inWorktreeConfined() {
	r.t.Helper()
	path := filepath.Join(r.root, ".runner/config.toml")
	data, err := os.ReadFile(path)
	if err != nil {
		r.t.Fatal(err)
	}
	config := strings.Replace(string(data), "[git]\nworktree = false\n", "[git]\nworktree = true\n", 1)
	config += fmt.Sprintf("\n[sandbox]\nmode = \"required\"\nwritable = [%s]\n", tomlString(r.log))
	r.write(".runner/config.toml", config)
	r.namespaces = true
}

// worktree returns the linked worktree that holds branch.
func (r *crashRepo) worktree(branch string) string {
	r.t.Helper()
	var dir string
	for _, line := range strings.Split(r.git("worktree", "list", "--porcelain"), "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			dir = p
		}
		if line == "branch refs/heads/"+branch {
			return dir
		}
	}
	r.t.Fatalf("no worktree holds %s", branch)
	return ""
}

// git runs git in the repository and returns its output; a failure fails
// the test.
func (r *crashRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.root
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return strings.TrimSpace(string(out))
}
