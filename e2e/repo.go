package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// The end-to-end tests in the crash_*_test.go files start the real
// command line as separate processes, because they kill it: the test
// binary plays `runner` when started under that name (testscript.Main in
// TestMain dispatches on argv[0]), and plays the crash agent under
// crashAgentEnv (see crash_agent_test.go).

// Repo is a repository the crash tests drive.
type Repo struct {
	T     testing.TB
	Root  string
	Paths state.Paths
	Log   string // CRASH_LOG: agents.txt, overlap.txt
	Token string // CRASH_TOKEN of every agent process of this repository
	// Namespaces: the agents' rooms are built in Namespaces, where each
	// sees its own processes only (see runnerCmd).
	Namespaces bool
	runs       int // runners started, for runs.txt (KeepEnv)
}

// TomlString quotes s for TOML (a JSON string is a valid TOML basic string
// for what the tests write).
func TomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func randomToken(t testing.TB) string {
	t.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// NewRepo creates a repository whose agent is the crash agent, with
// the given tree and extra config (appended to a config that has no
// attempt or iteration limit worth mentioning). agentEnv adds entries
// ("NAME = \"value\"") to the agent's environment.
func NewRepo(t testing.TB, treeJSON, extraConfig string, agentEnv ...string) *Repo {
	t.Helper()
	return NewRepoAt(t, t.TempDir(), treeJSON, extraConfig, agentEnv...)
}

// NewRepoAt is newCrashRepo in the folder root.
func NewRepoAt(t testing.TB, root, treeJSON, extraConfig string, agentEnv ...string) *Repo {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the crash tests read /proc to find surviving processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	extraEnv := ""
	for _, e := range agentEnv {
		extraEnv += ", " + e
	}
	r := &Repo{T: t, Root: root, Paths: state.NewPaths(root), Log: t.TempDir(), Token: randomToken(t)}
	// The crash tests' guards fail until an agent worked: no preflight.
	// They check the checkout itself after every kill: the work is done
	// in place (git.worktree = false).
	config := fmt.Sprintf(`[verify]
preflight = false

[git]
worktree = false

[executor]
preset = "command"
command = [%s]
timeout = "60s"
kill_grace = "500ms"
env = { %s = "1", %s = %s, %s = %s%s }

[loop]
max_iterations = 100000
max_attempts = 100000
%s`, TomlString(exe), CrashAgentEnv, CrashTokenEnv, TomlString(r.Token), CrashLogEnv, TomlString(r.Log), extraEnv, extraConfig)
	r.Write(".runner/config.toml", config)
	r.Write(".runner/tree.json", treeJSON)
	t.Cleanup(func() { r.killSurvivors() })
	r.keepOnFailure()
	return r
}

func (r *Repo) Write(rel, content string) {
	r.T.Helper()
	path := filepath.Join(r.Root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		r.T.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		r.T.Fatal(err)
	}
}

// RunnerCmd returns `runner --dir ROOT args...` as a separate process,
// with extra environment entries.
func (r *Repo) RunnerCmd(env []string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	r.T.Helper()
	exe, err := os.Executable()
	if err != nil {
		r.T.Fatal(err)
	}
	cmd := &exec.Cmd{
		Path: exe,
		Args: append([]string{"runner", "--dir", r.Root}, args...),
		Dir:  r.Root,
		// The repository is what the test made it, whatever folder the
		// machine's temporary folder is in: git (and the runner) do not
		// look for a repository above it.
		Env: append(append(os.Environ(), "NO_COLOR=1", "GIT_CEILING_DIRECTORIES="+filepath.Dir(r.Root),
			// The crash agents log outside the repository.
			"RUNNER_SANDBOX_WRITABLE="+r.Log,
			// They find each other, and log their pids, through /proc,
			// which a room's PID namespace would keep to itself (the
			// rooms in namespaces are room_*.txt's subject), unless the
			// test asks for them.
			proc.WithoutEnv+"="+r.withoutNamespaces()), env...),
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// withoutNamespaces is what the runner's rooms leave out.
func (r *Repo) withoutNamespaces() string {
	if r.Namespaces {
		return ""
	}
	return "namespaces"
}

// RunnerResult is how one runner process ended.
type RunnerResult struct {
	Code   int  // exit code; -1 when killed by a signal
	Killed bool // ended by SIGKILL
	Took   time.Duration
	Out    string
	State  *os.ProcessState
}

// RunRunner starts a runner and waits for it for at most limit, failing
// the test when it takes longer. With killAfter > 0 it sends SIGKILL once
// killAfter has passed.
func (r *Repo) RunRunner(limit, killAfter time.Duration, env []string, args ...string) RunnerResult {
	r.T.Helper()
	cmd, out := r.RunnerCmd(env, args...)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.T.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	var killTimer <-chan time.Time
	if killAfter > 0 {
		killTimer = time.After(killAfter)
	}
	deadline := time.After(limit)
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-killTimer:
			cmd.Process.Signal(syscall.SIGKILL)
			killTimer = nil
		case <-deadline:
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			r.T.Fatalf("runner %v did not finish within %s; output:\n%s", args, limit, out)
		}
	}
	res := RunnerResult{Code: cmd.ProcessState.ExitCode(), Took: time.Since(start), Out: out.String(), State: cmd.ProcessState}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		res.Killed = true
	}
	r.noteRun(env, killAfter, res)
	return res
}

// AgentProcesses lists the live processes (zombies excluded) carrying
// this repository's agent token.
func (r *Repo) AgentProcesses() []int {
	return LiveWithEnv(CrashTokenEnv + "=" + r.Token)
}

// WaitNoAgents waits (bounded) until no agent process is alive and
// reports the survivors otherwise.
func (r *Repo) WaitNoAgents(within time.Duration) []int {
	deadline := time.Now().Add(within)
	for {
		left := r.AgentProcesses()
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *Repo) killSurvivors() {
	for _, pid := range r.AgentProcesses() {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// Overlaps returns what the crash agents reported in overlap.txt.
func (r *Repo) Overlaps() string {
	data, _ := os.ReadFile(filepath.Join(r.Log, "overlap.txt"))
	return string(data)
}

// AgentStart is one line of agents.txt.
type AgentStart struct {
	PID, PGID, Iteration int
	Node, Role           string
}

func (r *Repo) AgentStarts() []AgentStart {
	r.T.Helper()
	data, err := os.ReadFile(filepath.Join(r.Log, "agents.txt"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		r.T.Fatal(err)
	}
	var out []AgentStart
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) != 5 {
			continue // a line torn by a kill of the agent
		}
		var a AgentStart
		a.PID, _ = strconv.Atoi(f[0])
		a.PGID, _ = strconv.Atoi(f[1])
		a.Iteration, _ = strconv.Atoi(f[2])
		a.Node, a.Role = f[3], f[4]
		out = append(out, a)
	}
	return out
}

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

func WalkTree(n *tree.Node, fn func(*tree.Node)) {
	fn(n)
	for _, c := range n.Children {
		WalkTree(c, fn)
	}
}

// ChainTree returns a tree of n leaves under a root, in groups of four,
// each leaf depending on the one before it in its group.
func ChainTree(prefix string, n int) string {
	type node struct {
		ID        string   `json:"id"`
		Title     string   `json:"title"`
		Goal      string   `json:"goal,omitempty"`
		DependsOn []string `json:"depends_on,omitempty"`
		Children  []*node  `json:"children,omitempty"`
	}
	root := &node{ID: prefix, Title: "Crash test " + prefix}
	var group *node
	for i := 0; i < n; i++ {
		if i%4 == 0 {
			group = &node{ID: fmt.Sprintf("%s-g%d", prefix, i/4), Title: "Group"}
			root.Children = append(root.Children, group)
		}
		leaf := &node{ID: fmt.Sprintf("%s-%03d", prefix, i), Title: fmt.Sprintf("Step %d", i), Goal: "Append a line to work/ID.txt."}
		if i%4 != 0 {
			leaf.DependsOn = []string{fmt.Sprintf("%s-%03d", prefix, i-1)}
		}
		group.Children = append(group.Children, leaf)
	}
	data, _ := json.MarshalIndent(map[string]any{"version": 1, "root": root}, "", "  ")
	return string(data) + "\n"
}

func ReadFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// LockHolders lists the processes that have the lock file open (Linux),
// for the message of a test that found the lock taken.
func LockHolders(lock string) string {
	var b strings.Builder
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err != nil || target != lock {
			continue
		}
		pid := strings.Split(fd, "/")[2]
		cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		stat, _ := os.ReadFile("/proc/" + pid + "/stat")
		fmt.Fprintf(&b, "  pid %s: %q; stat %s\n", pid, strings.ReplaceAll(string(cmdline), "\x00", " "), strings.TrimSpace(string(stat)))
	}
	if b.Len() == 0 {
		return "  (no process has it open)\n"
	}
	return b.String()
}

// RunLimit bounds every runner process of the crash tests.
const RunLimit = 2 * time.Minute
