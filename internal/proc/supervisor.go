//go:build unix

package proc

import (
	"strings"
	"sync"
	"sync/atomic"
)

// supervisorConf is how Run starts the supervisor.
type supervisorConf struct {
	path     string // the runner binary
	arg0     string // its argv[0]
	noCgroup bool   // none can be made: the supervisor does not try
	pids     pidsLimiter
	pidsNote string // why pids does not limit

	mu   sync.Mutex
	idle []*supervisorProc // supervisors waiting for a command (see take)
}

// supervisorConfig is set once UseSupervisor succeeded; nil: Run starts
// commands directly.
var supervisorConfig atomic.Pointer[supervisorConf]

// Tracking says how Run keeps track of what the commands it runs start.
type Tracking struct {
	// Supervised: each command runs under the supervisor, a child
	// subreaper that stops everything the command started.
	Supervised bool
	// Cgroup is the cgroup v2 under which each command gets a cgroup of
	// its own, stopped with cgroup.kill; "" when none can be made.
	Cgroup string
	// Note says why Supervised is false or Cgroup is empty.
	Note string
	// ProcessLimit says how a confined command's processes are bounded
	// (sandbox.Room.MaxProcesses): "cgroup v2 pids.max", "cgroup v1
	// pids.max (under DIR)"; "" when by no cgroup, and NoProcessLimit
	// says why.
	ProcessLimit, NoProcessLimit string
}

// pidsLimiter is how a supervisor limits a command's processes.
type pidsLimiter struct {
	v2 bool   // pids.max in the command's cgroup v2
	v1 string // else the cgroup v1 pids directory the commands' cgroups are made in; "" none
}

func (l pidsLimiter) ok() bool { return l.v2 || l.v1 != "" }

func (l pidsLimiter) String() string {
	switch {
	case l.v2:
		return "cgroup v2 pids.max"
	case l.v1 != "":
		return "cgroup v1 pids.max (under " + l.v1 + ")"
	}
	return "none"
}

// Arguments after SuperviseArg that say how to limit processes.
const (
	pidsV2Arg = "pids-v2"
	pidsV1Arg = "pids-v1="
)

func (l pidsLimiter) args() []string {
	switch {
	case l.v2:
		return []string{pidsV2Arg}
	case l.v1 != "":
		return []string{pidsV1Arg + l.v1}
	}
	return nil
}

func pidsLimiterFromArgs(args []string) pidsLimiter {
	var l pidsLimiter
	for _, a := range args {
		if a == pidsV2Arg {
			l.v2 = true
		} else if d, ok := strings.CutPrefix(a, pidsV1Arg); ok {
			l.v1 = d
		}
	}
	return l
}
