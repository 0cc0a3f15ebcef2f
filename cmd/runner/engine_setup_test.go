package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// TestEngineWorkerCannotFetch runs a tree on a worker whose git cannot
// reach the remote (its global git configuration sends the remote's path
// elsewhere): every iteration it takes fails before its agent starts.
// Those cost the tasks no attempt, and after loop.max_consecutive_errors
// of them in a row the coordinator stops, saying what the worker said and
// what to look at, rather than send the tasks round it all night. With a
// worker that can fetch, the same tree then runs to the end.
func TestEngineWorkerCannotFetch(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	srv := startDevServer(t, temporalCLI(t), filepath.Join(t.TempDir(), "temporal.db"), 0)
	remote := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", remote).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v\n%s", err, out)
	}
	conf := fmt.Sprintf(`max_consecutive_errors = 3
%s
[engine]
address = %q
remote = %q
parallel = 2
`, taskGuard, srv.address, remote)
	r := newCrashRepo(t, flatTree("fetch", 2, 0), conf, crashSteadyEnv+` = "1"`, crashSlotsEnv+` = "2"`)
	r.git("init", "-q", "-b", "main")
	r.write(".gitignore", ".runner/runs/\n.runner/context/\n.runner/state/\n.runner/lock\n")
	r.git("add", "-A")
	r.git("-c", "user.name=Person", "-c", "user.email=p@example.com", "commit", "-qm", "the project")

	elsewhere := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(elsewhere, fmt.Appendf(nil, "[url %q]\n\tinsteadOf = %s\n", filepath.Join(t.TempDir(), "gone.git"), remote), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := startWorkerWith(t, r, srv.address, filepath.Join(t.TempDir(), "bad"), "bad", []string{"GIT_CONFIG_GLOBAL=" + elsewhere})
	res := r.runRunner(3*time.Minute, 0, nil, "run")
	if res.code != 1 || !strings.Contains(res.out, "iterations in a row failed on their workers before the agent started (loop.max_consecutive_errors = 3)") ||
		!strings.Contains(res.out, "gone.git") {
		t.Fatalf("with a worker that cannot fetch, runner run exited %d, want 1 and the workers' failure:\n%s\nworker:\n%s", res.code, res.out, bad.out)
	}
	bad.stopCleanly()
	s := r.checkState("after the worker that cannot fetch")
	if len(s.metas) < 3 {
		t.Errorf("%d iterations, want at least 3 before the stop", len(s.metas))
	}
	for n, m := range s.metas {
		if m.Outcome != state.OutcomeInterrupted || !m.NoAttempt || m.Worker != "bad" {
			t.Errorf("iteration %d: outcome %s, no_attempt %v, worker %q; want interrupted with no attempt, on bad", n, m.Outcome, m.NoAttempt, m.Worker)
		}
	}
	for _, c := range s.tree.Root.Children {
		if c.Attempts != 0 || c.EffectiveStatus() != tree.StatusOpen {
			t.Errorf("task %s: %s with %d attempts, want open with none", c.ID, c.EffectiveStatus(), c.Attempts)
		}
	}
	if starts := r.agentStarts(); len(starts) > 0 {
		t.Errorf("an agent started on the worker that cannot fetch: %+v", starts)
	}

	good := startWorker(t, r, srv.address, filepath.Join(t.TempDir(), "good"), "good")
	if res := r.runRunner(3*time.Minute, 0, nil, "run"); res.code != 0 {
		t.Fatalf("with a worker that can fetch, runner run exited %d:\n%s\nworker:\n%s", res.code, res.out, good.out)
	}
	good.stopCleanly()
	r.checkFinal()
}
