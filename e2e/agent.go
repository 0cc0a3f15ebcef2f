package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/sandbox"
)

// The crash tests run the test binary itself as their agent: `runner`
// starts it with CrashAgentEnv=1 (through executor.env, so the runner
// itself never sees the variable), and init turns the process into the
// crash agent before any test machinery starts.
//
// The crash agent behaves like a busy coding agent with a few bad habits:
// it reads the prompt, sometimes leaves a grandchild (`sleep`) holding its
// stdout, prints, works for a random short while, appends to a file in the
// repository, and delivers "done" (sometimes "retry") with two
// assumptions.
// It also checks the promise it relies on: when it starts, no other
// process of the same test (same CrashTokenEnv) may be alive; if one is,
// it writes the offenders to overlap.txt in CrashLogEnv. Every agent and
// grandchild it starts is listed in agents.txt there as
// "pid pgid iteration node role".
const (
	CrashAgentEnv = "RUNNER_CRASH_AGENT"
	CrashTokenEnv = "CRASH_TOKEN" // unique per test; every agent process carries it
	CrashLogEnv   = "CRASH_LOG"   // directory for agents.txt and overlap.txt

	// CrashSteadyEnv=1 takes the chance out: always a grandchild, no
	// pause, always "done".
	CrashSteadyEnv = "CRASH_STEADY"
	// CrashDaemonEnv=1 also starts a `sleep` in a session of its own, out
	// of the agent's process group, as a daemon would.
	CrashDaemonEnv = "CRASH_DAEMON"
	// CrashLimitsEnv=1: now and then the first run of an iteration hits
	// a rate limit (it prints a 429 and exits 1 at once; role "limited"
	// in agents.txt), so that the runner waits and runs it again;
	// "always": every iteration's first run does.
	CrashLimitsEnv = "CRASH_LIMITS"
	// CrashSlotsEnv=N: the runner works on up to N tasks at once (SPEC
	// §14), so agents of other tasks may be alive when one starts. Then
	// an overlap is an agent process of another `runner` invocation (its
	// crashRunEnv differs: a killed runner's agent its successor did not
	// stop), one of the same task, or more than N agents at once.
	CrashSlotsEnv = "CRASH_SLOTS"
	// CrashRunEnv is set by the test in the environment of each runner
	// process it starts, to a value of its own; agents inherit it.
	CrashRunEnv = "CRASH_RUN"
	// CrashSlowEnv=MS makes the agent work for MS/2 to MS milliseconds
	// instead of a few, so that several are at work when a kill comes.
	CrashSlowEnv = "CRASH_SLOW"
	// CrashSharedEnv=FILE: the agent of a task whose id ends in "-s"
	// also appends its line to FILE (relative to where it works), so that
	// such tasks worked on at once conflict.
	CrashSharedEnv = "CRASH_SHARED"
	// CrashReviewerEnv=1 makes the process a reviewer (SPEC §17): it
	// reads the prompt, takes a while (crashSlowEnv), changes nothing and
	// approves, or now and then rejects; it is listed in agents.txt with
	// role "reviewer".
	CrashReviewerEnv = "CRASH_REVIEWER"
	// CrashHoldEnv=FILE: the agent, once started and logged, waits while
	// FILE exists (two minutes at most), so that a test can act while
	// agents are known to be at work.
	CrashHoldEnv = "CRASH_HOLD"
	// CrashEarlyEnv=1: the agent writes work/NODE.started before it
	// holds, so that an agent killed while held has left work; a run
	// that hits a rate limit writes work/NODE.limited first.
	CrashEarlyEnv = "CRASH_EARLY"
)

// NoNamespaces runs the crash agents' rooms without namespaces (see
// crashRepo.runnerCmd).
const NoNamespaces = proc.WithoutEnv + "=namespaces"

func init() {
	if os.Getenv(CrashAgentEnv) == "1" {
		os.Exit(crashAgent())
	}
}

func crashAgent() int {
	logDir := os.Getenv(CrashLogEnv)
	token := os.Getenv(CrashTokenEnv)
	iteration := os.Getenv("RUNNER_ITERATION")
	node := os.Getenv("RUNNER_NODE_ID")
	if logDir == "" || token == "" || iteration == "" || node == "" {
		fmt.Fprintln(os.Stderr, "crash agent: missing environment")
		return 125
	}
	if others := overlapping(LiveWithEnv(CrashTokenEnv+"="+token), node); len(others) > 0 && os.Getenv(CrashReviewerEnv) != "1" {
		appendLine(filepath.Join(logDir, "overlap.txt"),
			fmt.Sprintf("iteration %s (node %s, run %s, pid %d) started while these agent processes were alive: %s", iteration, node, os.Getenv(CrashRunEnv), os.Getpid(), describeProcs(others)))
	}
	pgid, _ := syscall.Getpgid(0)
	if os.Getenv(CrashReviewerEnv) == "1" {
		return crashReviewer(logDir, iteration, node, pgid)
	}
	steady := os.Getenv(CrashSteadyEnv) == "1"
	if limits := os.Getenv(CrashLimitsEnv); limits == "always" || limits == "1" && !steady && rand.IntN(5) == 0 {
		mark := filepath.Join(logDir, "limited-"+iteration)
		if _, err := os.Stat(mark); errors.Is(err, os.ErrNotExist) {
			appendLine(mark, "limited")
			appendLine(filepath.Join(logDir, "agents.txt"), fmt.Sprintf("%d %d %s %s limited", os.Getpid(), pgid, iteration, node))
			if os.Getenv(CrashEarlyEnv) == "1" {
				appendLine(filepath.Join("work", node+".limited"), "iteration "+iteration) // work the next run goes on with
			}
			io.Copy(io.Discard, os.Stdin)
			fmt.Fprintln(os.Stderr, "Error: 429 Too Many Requests: rate limit reached")
			return 1
		}
	}
	appendLine(filepath.Join(logDir, "agents.txt"), fmt.Sprintf("%d %d %s %s agent", os.Getpid(), pgid, iteration, node))

	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "crash agent: read the prompt:", err)
		return 1
	}
	if os.Getenv(CrashEarlyEnv) == "1" {
		appendLine(filepath.Join("work", node+".started"), "iteration "+iteration)
	}
	if hold := os.Getenv(CrashHoldEnv); hold != "" {
		for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(hold); err != nil {
				break
			}
		}
	}
	if steady || rand.IntN(3) == 0 {
		// A grandchild in the agent's group that keeps stdout open.
		gc := exec.Command("sleep", "30")
		gc.Stdout, gc.Stderr = os.Stdout, os.Stderr
		if err := gc.Start(); err == nil {
			appendLine(filepath.Join(logDir, "agents.txt"), fmt.Sprintf("%d %d %s %s grandchild", gc.Process.Pid, pgid, iteration, node))
		}
	}
	if os.Getenv(CrashDaemonEnv) == "1" {
		// A daemon: a session and process group of its own, no pipes.
		d := exec.Command("sleep", "60")
		d.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := d.Start(); err == nil {
			appendLine(filepath.Join(logDir, "agents.txt"), fmt.Sprintf("%d %d %s %s daemon", d.Process.Pid, d.Process.Pid, iteration, node))
		}
	}
	fmt.Printf("crash agent working on %s in iteration %s\n%s\n", node, iteration, strings.Repeat("busy ", 200))
	if ms, _ := strconv.Atoi(os.Getenv(CrashSlowEnv)); ms > 1 {
		time.Sleep(time.Duration(ms/2+rand.IntN(ms/2)) * time.Millisecond)
	} else if !steady {
		time.Sleep(time.Duration(rand.IntN(60)) * time.Millisecond)
	}
	appendLine(filepath.Join("work", node+".txt"), "iteration "+iteration)
	if shared := os.Getenv(CrashSharedEnv); shared != "" && strings.HasSuffix(node, "-s") {
		appendLine(shared, "iteration "+iteration+" of "+node)
	}

	status := "done"
	if !steady && rand.IntN(5) == 0 {
		status = "retry"
	}
	msg, _ := json.Marshal(map[string]any{
		"status":      status,
		"summary":     fmt.Sprintf("crash agent: %s in iteration %s", status, iteration),
		"assumptions": []string{"crash agent assumption one", "crash agent assumption two"},
	})
	if err := os.WriteFile(os.Getenv("RUNNER_OUTPUT_FILE"), append(msg, '\n'), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "crash agent:", err)
		return 1
	}
	return 0
}

// crashReviewer is the crash agent as a reviewer: it approves the work,
// or rejects it one time in six, after reading the prompt and working a
// while, and changes nothing.
func crashReviewer(logDir, iteration, node string, pgid int) int {
	appendLine(filepath.Join(logDir, "agents.txt"), fmt.Sprintf("%d %d %s %s reviewer", os.Getpid(), pgid, iteration, node))
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "crash reviewer: read the prompt:", err)
		return 1
	}
	if ms, _ := strconv.Atoi(os.Getenv(CrashSlowEnv)); ms > 1 {
		time.Sleep(time.Duration(ms/2+rand.IntN(ms/2)) * time.Millisecond)
	}
	verdict := map[string]any{"verdict": "approve", "reasons": []string{}}
	if rand.IntN(6) == 0 {
		verdict = map[string]any{"verdict": "reject", "reasons": []string{"crash reviewer: not yet"}}
	}
	msg, _ := json.Marshal(verdict)
	fmt.Printf("crash reviewer on %s in iteration %s\n", node, iteration)
	if err := os.WriteFile(os.Getenv("RUNNER_OUTPUT_FILE"), append(msg, '\n'), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "crash reviewer:", err)
		return 1
	}
	return 0
}

// overlapping returns, of the live agent processes others (the test's
// token), those that may not be alive when an agent of node starts: all
// of them when tasks are worked on one at a time; with crashSlotsEnv=N,
// those of another runner invocation or of the same task, or all of them
// when N other iterations (an agent and its grandchildren are one) are
// at work already.
func overlapping(others []int, node string) []int {
	slots, _ := strconv.Atoi(os.Getenv(CrashSlotsEnv))
	if slots < 1 || len(others) == 0 {
		return others
	}
	run := os.Getenv(CrashRunEnv)
	var bad []int
	iterations := map[string]bool{}
	for _, pid := range others {
		env, err := proc.ReadEnviron(pid, nil)
		if err != nil || len(env) == 0 {
			continue // ended meanwhile (a zombie's environment reads empty)
		}
		if !ContainsEntry(env, CrashRunEnv+"="+run) || ContainsEntry(env, "RUNNER_NODE_ID="+node) {
			bad = append(bad, pid)
			continue
		}
		for _, kv := range strings.Split(string(env), "\x00") {
			if n, ok := strings.CutPrefix(kv, "RUNNER_ITERATION="); ok {
				iterations[n] = true
			}
		}
	}
	if len(iterations) >= slots {
		return others
	}
	return bad
}

// describeProcs names each process of pids by what tells an overlap
// apart: its runner invocation, task, iteration, role and command line.
func describeProcs(pids []int) string {
	var out []string
	for _, pid := range pids {
		dir := "/proc/" + strconv.Itoa(pid)
		env, _ := proc.ReadEnviron(pid, nil)
		cmdline, _ := os.ReadFile(dir + "/cmdline")
		var keep []string
		for _, kv := range strings.Split(string(env), "\x00") {
			for _, name := range []string{CrashRunEnv, "RUNNER_NODE_ID", "RUNNER_ITERATION", CrashReviewerEnv} {
				if strings.HasPrefix(kv, name+"=") {
					keep = append(keep, kv)
				}
			}
		}
		out = append(out, fmt.Sprintf("%d [%s] %q", pid, strings.Join(keep, " "), strings.ReplaceAll(string(cmdline), "\x00", " ")))
	}
	return strings.Join(out, "; ")
}

func appendLine(path, line string) {
	os.MkdirAll(filepath.Dir(path), 0o755)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash agent:", err)
		return
	}
	f.WriteString(line + "\n")
	f.Close()
}

// LiveWithEnv lists the live processes, other than this one, whose
// environment holds entry (Linux: /proc/PID/environ; zombies do not
// count). Elsewhere it finds nothing.
func LiveWithEnv(entry string) []int {
	names, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, dir := range names {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil || pid == self {
			continue
		}
		env, err := proc.ReadEnviron(pid, nil)
		if err != nil || !ContainsEntry(env, entry) {
			continue
		}
		cmdline, _ := os.ReadFile(dir + "/cmdline")
		if args := strings.Split(string(cmdline), "\x00"); len(args) > 1 && args[1] == sandbox.ConfineArg {
			continue // a room's helper, waiting for its agent
		}
		stat, err := os.ReadFile(dir + "/stat")
		if err != nil {
			continue
		}
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 {
			if f := strings.Fields(string(stat[i+1:])); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
				continue
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

func ContainsEntry(environ []byte, entry string) bool {
	for _, kv := range strings.Split(string(environ), "\x00") {
		if kv == entry {
			return true
		}
	}
	return false
}
