//go:build unix

package proc

import (
	"sync"
	"sync/atomic"
)

// supervisorConf is how Run starts the supervisor.
type supervisorConf struct {
	path     string // the runner binary
	arg0     string // its argv[0]
	noCgroup bool   // none can be made: the supervisor does not try

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
}
