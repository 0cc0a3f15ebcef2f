package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// KeepEnv names a folder where a failed crash test leaves what it ran
// in: RUNNER_CRASH_KEEP=/tmp/keep go test ./e2e/crash keeps, for each
// repository of a failing test, its folder (.runner/ with the journal,
// run_state.json, every meta.json and tree.json), the agents' log, and
// runs.txt: every runner started, with its environment, when it was
// killed, how it ended and what it printed, and copies of
// run_state.json and tree.json as each runner left them (snap/). Without
// it nothing is kept.
const KeepEnv = "RUNNER_CRASH_KEEP"

// keeping reports whether KeepEnv is set.
func keeping() bool { return os.Getenv(KeepEnv) != "" }

// keepOnFailure has r's folders copied to KeepEnv's folder when the
// test fails.
func (r *Repo) keepOnFailure() {
	if !keeping() {
		return
	}
	r.T.Cleanup(func() {
		if !r.T.Failed() {
			return
		}
		dest := filepath.Join(os.Getenv(KeepEnv), strings.NewReplacer("/", "_", " ", "_").Replace(r.T.Name())+"-"+r.Token)
		if err := os.MkdirAll(dest, 0o755); err != nil {
			r.T.Logf("%s: %v", KeepEnv, err)
			return
		}
		for _, from := range []struct{ src, name string }{{r.Root, "repo"}, {r.Log, "log"}} {
			if out, err := exec.Command("cp", "-a", from.src, filepath.Join(dest, from.name)).CombinedOutput(); err != nil {
				r.T.Logf("%s: copy %s: %v: %s", KeepEnv, from.src, err, out)
			}
		}
		r.T.Logf("the repository and the runs are kept in %s", dest)
	})
}

// noteRun adds a runner's run to runs.txt and its state files to snap/,
// when KeepEnv is set.
func (r *Repo) noteRun(env []string, killAfter time.Duration, res RunnerResult) {
	if !keeping() {
		return
	}
	r.runs++
	f, err := os.OpenFile(filepath.Join(r.Log, "runs.txt"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "=== run %d: env %v, kill after %s: exit %d, killed %v, took %s\n%s\n", r.runs, env, killAfter, res.Code, res.Killed, res.Took, res.Out)
	snap := filepath.Join(r.Log, "snap")
	os.MkdirAll(snap, 0o755)
	for _, file := range []string{r.Paths.RunState(), r.Paths.Tree()} {
		if data, err := os.ReadFile(file); err == nil {
			os.WriteFile(filepath.Join(snap, fmt.Sprintf("%04d-%s", r.runs, filepath.Base(file))), data, 0o644)
		}
	}
}
