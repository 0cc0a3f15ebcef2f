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
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/state"
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
