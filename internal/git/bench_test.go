package git

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The git work of the runner's iterations on a repository of benchFiles
// tracked files (100 folders of 100), made once per `go test -bench` run:
//
//	go test ./internal/git -run '^$' -bench . -benchtime 200x -count 3
//
// Each benchmark starts from the first commit, on a branch of its own. The
// per-call figures (status-ms/op, ...) are the time spent in each kind of
// git call, out of the total ns/op.
const benchFiles = 10000

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

var (
	benchOnce sync.Once
	benchDir  string // the folder holding the repository and its HOME
	benchErr  error
)

// benchRepo returns the 10,000-file repository, made on first use, with
// its working tree on a new branch named after the benchmark, at the first
// commit, and nothing changed.
func benchRepo(b *testing.B) *scratch {
	b.Helper()
	needGit(b)
	benchOnce.Do(func() { benchDir, benchErr = makeBenchRepo() })
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	s := &scratch{t: b, dir: filepath.Join(benchDir, "repo"), env: benchEnv()}
	s.git("checkout", "-q", "-f", "-B", "bench-"+strings.ReplaceAll(b.Name(), "/", "-"), "base")
	s.git("clean", "-fdq", "--", ":/", ":(exclude).runner")
	r, err := Open(ctx, s.dir, Options{Env: s.env})
	if err != nil {
		b.Fatal(err)
	}
	s.r = r
	if _, err := r.Changes(ctx, runtime); err != nil { // the index refreshed, as after any iteration
		b.Fatal(err)
	}
	return s
}

func benchEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "GIT_") && k != "HOME" && k != "XDG_CONFIG_HOME" {
			env = append(env, kv)
		}
	}
	home := filepath.Join(benchDir, "home")
	return append(env, "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1")
}

// makeBenchRepo writes benchFiles files of about 400 bytes, the .runner
// folder of a runner that has run 50 iterations, and commits the tracked
// files as the branch base.
func makeBenchRepo() (string, error) {
	dir, err := os.MkdirTemp("", "runner-git-bench-")
	if err != nil {
		return "", err
	}
	benchDir = dir
	repo := filepath.Join(dir, "repo")
	files := map[string]string{
		".gitignore":         "*.log\nbuild/\n",
		".runner/.gitignore": "context/\nruns/\nlock\n",
		".runner/tree.json":  "{}\n",
	}
	for d := range benchFiles / 100 {
		for f := range 100 {
			files[fmt.Sprintf("src/pkg%03d/file%03d.go", d, f)] = strings.Repeat(fmt.Sprintf("// package %d, file %d\n", d, f), 16)
		}
	}
	for i := 1; i <= 50; i++ {
		for _, f := range []string{"prompt.md", "context.json", "executor.log", "output.json", "guard.log", "meta.json"} {
			files[fmt.Sprintf(".runner/runs/%06d/%s", i, f)] = "x\n"
		}
	}
	files[".runner/state/run_state.json"] = "{}\n"
	files[".runner/state/journal.jsonl"] = "{}\n"
	for name, content := range files {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return dir, err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return dir, err
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "home"), 0o755); err != nil {
		return dir, err
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"config", "user.name", "Bench"},
		{"config", "user.email", "bench@example.com"},
		{"add", "--", ":/", ":(exclude).runner/state"},
		{"commit", "-q", "-m", "base"},
		{"branch", "base"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = repo, benchEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			return dir, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return dir, nil
}

// taskChange makes the change of a typical task: three files edited, two
// added.
func (s *scratch) taskChange(i int) {
	for j := range 3 {
		s.write(fmt.Sprintf("src/pkg%03d/file%03d.go", (i*7+j)%100, (i*13+j)%100), fmt.Sprintf("// edited by task %d\n", i))
	}
	for j := range 2 {
		s.write(fmt.Sprintf("src/new/task%d_%d.go", i, j), fmt.Sprintf("package new // task %d\n", i))
	}
}

// callTimes adds up, per git subcommand, the time of the calls the
// Repo's git runs, and reports it per operation.
type callTimes map[string]time.Duration

func traceCalls(r *Repo) callTimes {
	return traceCallsWhile(r, nil)
}

// traceCallsWhile is traceCalls of the calls made while *on is true (all
// of them when on is nil).
func traceCallsWhile(r *Repo, on *bool) callTimes {
	ct := callTimes{}
	r.x.trace = func(args []string, took time.Duration) {
		if on != nil && !*on {
			return
		}
		for len(args) > 1 && args[0] == "-c" {
			args = args[2:]
		}
		if len(args) > 0 {
			ct[args[0]] += took
		}
	}
	return ct
}

func (ct callTimes) report(b *testing.B) {
	names := make([]string, 0, len(ct))
	for n := range ct {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b.ReportMetric(float64(ct[n].Microseconds())/1000/float64(b.N), n+"-ms/op")
	}
}

// BenchmarkIterationWithoutCommit: what an iteration that commits nothing
// needs: whether the working tree changed (one git status).
func BenchmarkIterationWithoutCommit(b *testing.B) {
	s := benchRepo(b)
	ct := traceCalls(s.r)
	b.ResetTimer()
	for range b.N {
		cs, err := s.r.Changes(ctx, runtime)
		if err != nil || len(cs) != 0 {
			b.Fatal(cs, err)
		}
	}
	b.StopTimer()
	ct.report(b)
}

// BenchmarkFinishedTask: a task's change committed on the checked-out
// branch: Snapshot (copy of the index, add -A, write-tree, diff-tree),
// Commit (rev-parse of the parent's tree, commit-tree), AdvanceHead (the
// snapshot's index installed, update-ref). With "find": the
// FindByTrailers of the exactly-once check first.
func BenchmarkFinishedTask(b *testing.B) {
	for _, find := range []bool{false, true} {
		name := "commit"
		if find {
			name = "find+commit"
		}
		b.Run(name, func(b *testing.B) {
			s := benchRepo(b)
			parent := s.git("rev-parse", "HEAD")
			ct := traceCalls(s.r)
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				s.taskChange(i)
				b.StartTimer()
				tr := map[string]string{TrailerNode: "n", TrailerIteration: fmt.Sprint(i)}
				if find {
					if c, err := s.r.FindByTrailers(ctx, "HEAD", 50, tr); err != nil || c != "" {
						b.Fatal(c, err)
					}
				}
				snap, err := s.r.Snapshot(ctx, parent, runtime)
				if err != nil || len(snap.Paths) != 5 {
					b.Fatal(snap.Paths, err)
				}
				c, err := s.r.Commit(ctx, snap.Tree, parent, Message{Subject: "task", Trailers: NodeTrailers("n", i)})
				if err != nil {
					b.Fatal(err)
				}
				if err := s.r.AdvanceHead(ctx, snap, c, parent); err != nil {
					b.Fatal(err)
				}
				parent = c
			}
			b.StopTimer()
			ct.report(b)
		})
	}
}

// BenchmarkFailedAttempt: a failed attempt kept aside and undone:
// Snapshot, SaveAttempt, ResetWorktree (which snapshots again).
func BenchmarkFailedAttempt(b *testing.B) {
	s := benchRepo(b)
	checkpoint := s.git("rev-parse", "HEAD")
	ct := traceCalls(s.r)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		s.taskChange(i)
		b.StartTimer()
		snap, err := s.r.Snapshot(ctx, checkpoint, runtime)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.r.SaveAttempt(ctx, i+1, snap.Tree, checkpoint, Message{Subject: "attempt"}); err != nil {
			b.Fatal(err)
		}
		if err := s.r.ResetWorktree(ctx, checkpoint, runtime); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	ct.report(b)
}

// BenchmarkSnapshotSeeding compares ways of writing the tree of a working
// tree holding a task's change, without touching its index: Snapshot (a
// copy of the index, add -A, write-tree, and its diff-tree against the
// parent); the list of changes from git status, then update-index of just
// those paths in a copy of the index and write-tree; and a fresh index
// from the tree (read-tree) with add -A, which must read every file again.
func BenchmarkSnapshotSeeding(b *testing.B) {
	b.Run("Snapshot", func(b *testing.B) {
		s := benchRepo(b)
		s.taskChange(1)
		for range b.N {
			if _, err := s.r.Snapshot(ctx, "", runtime); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, way := range []string{"status+update-index", "read-tree+add-A"} {
		b.Run(way, func(b *testing.B) {
			s := benchRepo(b)
			s.taskChange(1)
			idx := filepath.Join(s.r.GitDir(), "bench-index")
			defer os.Remove(idx)
			env := append(s.env[:len(s.env):len(s.env)], "GIT_INDEX_FILE="+idx)
			run := func(stdin string, args ...string) {
				cmd := exec.Command("git", args...)
				cmd.Dir, cmd.Env, cmd.Stdin = s.dir, env, strings.NewReader(stdin)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
				}
			}
			for range b.N {
				if way == "status+update-index" {
					cs, err := s.r.Changes(ctx, runtime)
					if err != nil {
						b.Fatal(err)
					}
					data, err := os.ReadFile(filepath.Join(s.r.GitDir(), "index"))
					if err != nil {
						b.Fatal(err)
					}
					if err := os.WriteFile(idx, data, 0o644); err != nil {
						b.Fatal(err)
					}
					var paths strings.Builder
					for _, c := range cs {
						paths.WriteString(c.Path + "\x00")
					}
					run(paths.String(), "update-index", "--add", "--remove", "--replace", "-z", "--stdin")
				} else {
					os.Remove(idx)
					run("", "read-tree", "HEAD")
					run("", "add", "-A", "--", ":/", ":(exclude).runner/state")
				}
				run("", "write-tree")
			}
		})
	}
}

// BenchmarkStatFloor is the least any status of the repository costs on
// the machine: an lstat of each of its 10,000 tracked files, from Go, on
// one goroutine and on two (git's status spreads them over threads).
func BenchmarkStatFloor(b *testing.B) {
	s := benchRepo(b)
	files := strings.Split(s.git("ls-files"), "\n")
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("%d-goroutines", workers), func(b *testing.B) {
			for range b.N {
				var wg sync.WaitGroup
				for w := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := w; i < len(files); i += workers {
							if _, err := os.Lstat(filepath.Join(s.dir, files[i])); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
			}
		})
	}
}

// BenchmarkIntegrate10k: a parallel slot's task commit brought onto a run
// head that another task's commit moved since the slot started (SPEC.md
// §14): Integrate, that is rev-parse of the commits, merge-base
// --is-ancestor (before git 2.40), merge-tree --write-tree and Commit.
// Both commits are a task's change (taskChange) on the same checkpoint,
// to different files, made outside the timer by another Repo, whose git
// calls are not counted.
func BenchmarkIntegrate10k(b *testing.B) {
	s := benchRepo(b)
	base := s.git("rev-parse", "HEAD")
	maker, err := Open(ctx, s.dir, Options{Env: s.env})
	if err != nil {
		b.Fatal(err)
	}
	commit := func(i int) string {
		s.taskChange(i)
		snap, err := maker.Snapshot(ctx, base, runtime)
		if err != nil {
			b.Fatal(err)
		}
		c, err := maker.Commit(ctx, snap.Tree, base, Message{Subject: fmt.Sprintf("task %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		if err := maker.ResetWorktree(ctx, base, runtime); err != nil {
			b.Fatal(err)
		}
		return c
	}
	ct := traceCalls(s.r)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		onto, task := commit(2*i+1), commit(2*i+2) // never the same files
		b.StartTimer()
		c, err := s.r.Integrate(ctx, onto, task, Message{Subject: "task", Trailers: NodeTrailers("n", i)})
		if err != nil || c == "" {
			b.Fatal(c, err)
		}
	}
	b.StopTimer()
	ct.report(b)
}

// BenchmarkStartDetachedAt10k: a slot's linked worktree put at the run
// head for its next task, with a task's change left over (three files
// edited, two added, one of them staged); the run head alternates between
// the checkpoint and a commit of another task's change.
func BenchmarkStartDetachedAt10k(b *testing.B) {
	s := benchRepo(b)
	base := s.git("rev-parse", "HEAD")
	s.taskChange(0)
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "the next checkpoint")
	next := s.git("rev-parse", "HEAD")
	dir, err := os.MkdirTemp(benchDir, "slot-")
	if err != nil {
		b.Fatal(err)
	}
	slot, _, err := s.r.AddDetachedWorktree(ctx, filepath.Join(dir, "slot"), base)
	if err != nil {
		b.Fatal(err)
	}
	defer s.r.RemoveWorktree(ctx, slot.Top(), true)
	w := &scratch{t: b, dir: slot.Top(), env: s.env}
	ct := traceCalls(slot)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		w.taskChange(i + 1)
		w.git("add", fmt.Sprintf("src/new/task%d_0.go", i+1))
		at := next
		if i%2 == 1 {
			at = base
		}
		b.StartTimer()
		if err := slot.StartDetachedAt(ctx, at, runtime); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	ct.report(b)
}

// benchSlot makes a slot (a linked worktree detached at base) of the
// 10,000-file repository, and the commit next: base with another task's
// change.
func benchSlot(b *testing.B, s *scratch) (slot *Repo, w *scratch, base, next string) {
	base = s.git("rev-parse", "HEAD")
	s.taskChange(0)
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "the next checkpoint")
	next = s.git("rev-parse", "HEAD")
	dir, err := os.MkdirTemp(benchDir, "slot-")
	if err != nil {
		b.Fatal(err)
	}
	slot, _, err = s.r.AddDetachedWorktree(ctx, filepath.Join(dir, "slot"), base)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.r.RemoveWorktree(ctx, slot.Top(), true) })
	return slot, &scratch{t: b, dir: slot.Top(), env: s.env}, base, next
}

// BenchmarkMoveDetached10k: a slot known to be at its checkpoint, nothing
// changed, moved to the next one by the paths that differ (what
// StartDetachedAt does from an unknown state); it goes back and forth
// between the checkpoint and a commit of another task's change.
func BenchmarkMoveDetached10k(b *testing.B) {
	s := benchRepo(b)
	slot, _, base, next := benchSlot(b, s)
	ct := traceCalls(slot)
	b.ResetTimer()
	for i := range b.N {
		from, to := base, next
		if i%2 == 1 {
			from, to = next, base
		}
		if err := slot.MoveDetached(ctx, from, to); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	ct.report(b)
}

// BenchmarkResetFromSnapshot10k: a slot holding a task's work (three
// files edited, two added), just snapshotted, brought to the task's work
// replayed onto the next checkpoint, as for the guards on an integrated
// result.
func BenchmarkResetFromSnapshot10k(b *testing.B) {
	s := benchRepo(b)
	slot, w, base, next := benchSlot(b, s)
	resetting := false
	ct := traceCallsWhile(slot, &resetting)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		w.taskChange(i + 1)
		snap, err := slot.Snapshot(ctx, base, runtime)
		if err != nil {
			b.Fatal(err)
		}
		task, err := slot.CommitSnapshot(ctx, snap, Message{Subject: "task"})
		if err != nil {
			b.Fatal(err)
		}
		result, err := slot.Integrate(ctx, next, task, Message{Subject: "task"})
		if err != nil {
			b.Fatal(err)
		}
		resetting = true
		b.StartTimer()
		if err := slot.ResetFromSnapshot(ctx, snap, result, runtime); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		resetting = false
		if err := slot.StartDetachedAt(ctx, base, runtime); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	ct.report(b)
}
