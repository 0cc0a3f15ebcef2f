package e2e

import (
	"os"
	"strconv"
	"strings"

	"github.com/runner-cli/runner/internal/engine"
)

// IterationsAtWork are the iterations of this repository whose agent
// processes are alive.
func (r *Repo) IterationsAtWork() map[string]bool {
	return r.IterationsOf(r.AgentProcesses())
}

// IterationsOf are the iterations of the processes pids.
func (r *Repo) IterationsOf(pids []int) map[string]bool {
	at := map[string]bool{}
	for _, pid := range pids {
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(env), "\x00") {
			if n, ok := strings.CutPrefix(kv, "RUNNER_ITERATION="); ok {
				at[n] = true
			}
		}
	}
	return at
}

// AgentsOn lists the live agent processes of this repository a worker in
// dir started.
func (r *Repo) AgentsOn(dir string) []int {
	var on []int
	for _, pid := range r.AgentProcesses() {
		if env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ"); err == nil && ContainsEntry(env, engine.DirEnv+"="+dir) {
			on = append(on, pid)
		}
	}
	return on
}
