package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// OneTask is a tree with a single task.
const OneTask = `{"version": 1, "root": {"id": "job", "title": "Job", "children": [{"id": "only", "title": "The only task"}]}}`

// FakeAgentRepo creates a repository whose agent is the scripted fake
// agent (internal/fakeagent) with the given script and extra [executor]
// lines; the agent and its children carry the repository's token.
func FakeAgentRepo(t *testing.T, treeJSON, script, executorExtra string) *Repo {
	t.Helper()
	return FakeAgentRepoAt(t, t.TempDir(), treeJSON, script, executorExtra)
}

// FakeAgentRepoAt is fakeAgentRepo in the folder root.
func FakeAgentRepoAt(t *testing.T, root, treeJSON, script, executorExtra string) *Repo {
	t.Helper()
	if _, err := exec.LookPath("fakeagent"); err != nil {
		t.Skipf("fakeagent is not installed by TestMain: %v", err)
	}
	r := NewRepoAt(t, root, treeJSON, "")
	r.Write("agent.json", script)
	r.Write(".runner/config.toml", fmt.Sprintf(`[executor]
preset = "command"
command = ["fakeagent", %s]
env = { %s = %s }
%s

[loop]
max_iterations = 10
max_attempts = 5
`, TomlString(filepath.Join(r.Root, "agent.json")), CrashTokenEnv, TomlString(r.Token), executorExtra))
	return r
}

// StartRunner starts `runner run` in the background; the returned
// function waits for it, at most limit.
func (r *Repo) StartRunner(args ...string) (*exec.Cmd, func(limit time.Duration) RunnerResult) {
	r.T.Helper()
	cmd, out := r.RunnerCmd(nil, append([]string{"run"}, args...)...)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.T.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	r.T.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
	})
	return cmd, func(limit time.Duration) RunnerResult {
		r.T.Helper()
		select {
		case <-done:
		case <-time.After(limit):
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			r.T.Fatalf("runner did not finish within %s; output:\n%s", limit, out)
		}
		res := RunnerResult{Code: cmd.ProcessState.ExitCode(), Took: time.Since(start), Out: out.String(), State: cmd.ProcessState}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Killed = ws.Signal() == syscall.SIGKILL
		}
		return res
	}
}

// AgentRunning reports whether iteration 1's agent printed "ready".
func (r *Repo) AgentRunning() bool {
	data, _ := os.ReadFile(filepath.Join(r.Paths.RunDir(1), "executor.log"))
	return strings.Contains(string(data), "ready")
}
