package lane

import (
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/preflight"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/state"
)

// KillLeftovers stops what the agent or the guards of a dead runner's
// in-flight iteration left running, so that two agents never work in the
// repository at once. A supervisor normally does that by itself when its
// runner dies (see proc.Supervise); what is found here is what a
// supervisor is still stopping, or what was left when the supervisor was
// killed too. On Linux it first stops the supervised commands' cgroups
// that hold a process with this repository's RUNNER_DIR and the
// iteration's RUNNER_ITERATION in its environment (with everything in
// them, also what cleared its environment), then every process group
// holding such a process. That finds them also when the runner died
// before recording the agent's group id, and never hits a group whose id
// was reused after a reboot. Elsewhere it kills the group recorded in
// in_flight. grace is how long each gets between SIGTERM and SIGKILL.
func KillLeftovers(p state.Paths, in *state.InFlight, grace time.Duration, log *log.Logger) {
	var groups []int
	if runtime.GOOS == "linux" {
		marks := []string{"RUNNER_DIR=" + p.Dir, "RUNNER_ITERATION=" + strconv.Itoa(in.Iteration)}
		if in.Iteration == 0 {
			marks[1] = preflight.Mark // the guards of a preflight
		}
		for _, cg := range proc.CgroupsWithEnv(marks...) {
			log.Warn("killing the cgroup of an agent or guard left by a previous runner", "cgroup", cg, "iteration", in.Iteration)
			if err := proc.KillCgroup(cg, grace); err != nil {
				log.Error("could not kill the leftover cgroup", "cgroup", cg, "err", err)
			}
		}
		groups = proc.GroupsWithEnv(marks...)
		if in.AgentPGID > 1 && !slices.Contains(groups, in.AgentPGID) && proc.GroupAlive(in.AgentPGID) {
			log.Warn("the process group recorded for the previous agent is alive but holds no process of that agent (its id was probably reused); leaving it alone",
				"pgid", in.AgentPGID, "iteration", in.Iteration)
		}
	} else if in.AgentPGID > 1 {
		groups = []int{in.AgentPGID}
	}
	for _, pg := range groups {
		if !proc.GroupAlive(pg) {
			continue
		}
		log.Warn("killing the agent process group left by a previous runner", "pgid", pg, "iteration", in.Iteration)
		if err := proc.KillGroup(pg, grace); err != nil {
			log.Error("could not kill the leftover agent", "pgid", pg, "err", err)
		}
	}
}

// KillPreflightLeftovers stops what the guards of a killed runner's
// preflight left running (Linux; elsewhere their supervisor does).
func KillPreflightLeftovers(p state.Paths, grace time.Duration, log *log.Logger) {
	if runtime.GOOS == "linux" {
		KillLeftovers(p, &state.InFlight{}, grace, log)
	}
}

// StopEscaped stops what is left of iteration n's agent when the
// iteration is recorded. It is the last fallback: the agent's supervisor
// has already stopped its group, its cgroup and every process below it
// before the agent's run returned, so what is found here escaped all
// three (a process moved to another cgroup and adopted by another
// subreaper), or ran without a supervisor (not Linux, or no
// /proc/self/exe). It is found, on Linux only, by this repository's
// RUNNER_DIR and the iteration's RUNNER_ITERATION in its environment; a
// process that cleared its environment as well is not. Only processes
// started since since, when its agent started, need a look (zero: all).
func StopEscaped(p state.Paths, n int, since proc.PIDMark, grace time.Duration, log *log.Logger) {
	if runtime.GOOS != "linux" {
		return
	}
	for _, pg := range proc.GroupsWithEnvSince(since, "RUNNER_DIR="+p.Dir, "RUNNER_ITERATION="+strconv.Itoa(n)) {
		log.Warn("stopping processes the agent left running outside its process group", "pgid", pg, "iteration", n)
		if err := proc.KillGroup(pg, grace); err != nil {
			log.Error("could not stop the agent's processes", "pgid", pg, "err", err)
		}
	}
}
