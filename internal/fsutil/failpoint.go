package fsutil

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// FailpointEnv names the environment variable of the crash-testing hook.
//
// It is a testing hook, not a feature: the crash tests set it to make a
// runner kill itself with SIGKILL at an exact instant inside a state write,
// which a kill sent from outside only hits by luck. Its value is
//
//	POINT[:FILE][@N]
//
// POINT is where the process dies:
//
//	temp    in WriteFileAtomic, after half of the data went to the temporary
//	        file (before its fsync and rename): a torn temporary file is left
//	rename  in WriteFileAtomic, after the rename and before the directory
//	        fsync: the new content is in place
//	append  in AppendSync and AppendLine, after half of the data was
//	        written: a torn last line is left
//	git     a step of a git checkpoint (FailAt), FILE naming it: "commit"
//	        (the task's commit object made, the run branch not yet moved)
//	        or "advance" (the branch moved, the outcome not yet recorded)
//	review  a step of a review (FailAt): "held" (the work held, the
//	        reviewer not yet asked) or "verdict" (its verdict in memory,
//	        not yet recorded)
//	keep    the keep's sync (FailAt, "sync"), before it copies anything;
//	        only when named: it runs in the background
//	guards  the guards of an iteration have run, the agent's code with
//	        them, and nothing of what they did is checked or recorded yet
//	        (FailAt, "ran")
//	gitcmd  a git command of the runner's is running (FailAt after it
//	        started, FILE naming its subcommand: "add", "read-tree"): the
//	        runner dies while its git works
//	*       any of the above but keep, guards and gitcmd
//
// FILE, when given, restricts the hook to files with that base name
// ("run_state.json"). N (default 1) makes the process die at the N-th
// matching point rather than the first. The variable is read once when the
// program starts and removed from its environment, so that the agents and
// guards it starts do not inherit it. A malformed value makes the program
// exit with status 2 at start.
const FailpointEnv = "RUNNER_FAILPOINT"

// Failpoint names.
const (
	FailTemp   = "temp"
	FailRename = "rename"
	FailAppend = "append"
	// FailGit is a step of the git checkpoint (FailAt's label: "commit",
	// after the task's commit object is made; "advance", after the run
	// branch moved to it).
	FailGit = "git"
	// FailReview is a step of a review ("held", "verdict").
	FailReview = "review"
	// FailKeep is the keep's sync ("sync").
	FailKeep = "keep"
	// FailGuards is the moment the guards have run ("ran").
	FailGuards = "guards"
	// FailGitCmd is a git command running, labelled by its subcommand.
	FailGitCmd = "gitcmd"
)

type failpointSpec struct {
	point string // FailTemp, FailRename, FailAppend or "*"
	file  string // base name, "" = any
	n     int64
}

var (
	failpoint     *failpointSpec
	failpointHits atomic.Int64
)

func init() {
	v, ok := os.LookupEnv(FailpointEnv)
	if !ok {
		return
	}
	os.Unsetenv(FailpointEnv)
	spec, err := parseFailpoint(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s=%q: %v\n", FailpointEnv, v, err)
		os.Exit(2)
	}
	failpoint = spec
}

func parseFailpoint(v string) (*failpointSpec, error) {
	s := &failpointSpec{n: 1}
	if i := strings.LastIndexByte(v, '@'); i >= 0 {
		n, err := strconv.ParseInt(v[i+1:], 10, 64)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("the count after @ must be a positive integer")
		}
		s.n, v = n, v[:i]
	}
	s.point, s.file, _ = strings.Cut(v, ":")
	switch s.point {
	case FailTemp, FailRename, FailAppend, FailGit, FailReview, FailKeep, FailGuards, FailGitCmd, "*":
	default:
		return nil, fmt.Errorf("unknown point %q: want temp, rename, append, git, review, keep, guards, gitcmd or *", s.point)
	}
	if strings.ContainsAny(s.file, `/\`) {
		return nil, fmt.Errorf("file %q: give a base name, not a path", s.file)
	}
	return s, nil
}

// FailAt kills the process at a step that is not a file write, named
// point and label, when the crash-testing hook asks for it.
func FailAt(point, label string) {
	if failHere(point, label) {
		die()
	}
}

// failHere reports whether the process must die at this point of a write
// to path. Only the crash-testing hook ever makes it true.
func failHere(point, path string) bool {
	fp := failpoint
	if fp == nil {
		return false
	}
	if (fp.point != "*" && fp.point != point) || (fp.file != "" && fp.file != baseName(path)) {
		return false
	}
	if fp.point == "*" && (point == FailKeep || point == FailGuards || point == FailGitCmd) {
		// keep runs in the background (* must name the same point on
		// every run); the others are aimed at by name.
		return false
	}
	return failpointHits.Add(1) == fp.n
}

// die kills the process with SIGKILL (on Windows, TerminateProcess): no
// deferred function, no buffered write, nothing else runs.
func die() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Kill()
	}
	for {
		time.Sleep(time.Hour) // the signal arrives before this returns
	}
}

func baseName(path string) string {
	if i := strings.LastIndexAny(path, `/\`); i >= 0 {
		return path[i+1:]
	}
	return path
}
