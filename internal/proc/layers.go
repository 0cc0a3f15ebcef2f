//go:build unix

package proc

import (
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/runner-cli/runner/internal/sandbox"
)

// WithoutEnv leaves layers of the agent's room out, for a machine where
// one misbehaves and for tests of a machine that lacks it: a
// comma-separated list of "namespaces" and "process-limit". What is left
// out is an opening like any other: said at the start of a run, and
// refused by sandbox.mode = "required".
const WithoutEnv = "RUNNER_SANDBOX_WITHOUT"

// probed caches the namespaces probe per value of WithoutEnv: the
// machine does not change during a run.
var probed struct {
	sync.Mutex
	by map[string]sandbox.Layers
}

// RoomLayers finds what this machine gives a room whose processes are
// bounded by maxProcesses (0: none, by the configuration's choice): the
// Landlock ABI, the namespaces a room can be built in (by building one,
// see sandbox.ProbeNamespaces), what bounds its processes. The probe runs
// once per process.
func RoomLayers(maxProcesses int) sandbox.Layers {
	without := os.Getenv(WithoutEnv)
	off := strings.Split(without, ",")
	probed.Lock()
	l, ok := probed.by[without]
	if !ok {
		l = probeLayers(slices.Contains(off, "namespaces"))
		if probed.by == nil {
			probed.by = map[string]sandbox.Layers{}
		}
		probed.by[without] = l
	}
	probed.Unlock()
	if l.Landlock < 1 {
		return l
	}
	switch how, why := ProcessLimit(); {
	case maxProcesses <= 0:
		l.NoProcessLimit, l.ByConfig = "sandbox.max_processes = 0", true
	case slices.Contains(off, "process-limit"):
		l.NoProcessLimit = "left out by " + WithoutEnv
	case how != "":
		l.ProcessLimit = how
	case l.Namespaces == sandbox.NamespacesUser && os.Getuid() != 0:
		l.ProcessLimit = "RLIMIT_NPROC in the room's user namespace"
	case l.Namespaces == sandbox.NamespacesUser:
		l.NoProcessLimit = why + "; and RLIMIT_NPROC does not hold for root"
	default:
		l.NoProcessLimit = why + "; and RLIMIT_NPROC needs a user namespace of the room's"
	}
	return l
}

// probeLayers finds Landlock and the namespaces.
func probeLayers(noNamespaces bool) sandbox.Layers {
	var l sandbox.Layers
	abi, err := landlockABI()
	if abi < 1 {
		l.NoLandlock = err.Error()
		return l
	}
	l.Landlock = abi
	if noNamespaces {
		l.NoNamespaces = "left out by " + WithoutEnv
		return l
	}
	err = sandbox.ProbeNamespaces(sandbox.NamespacesUser)
	if err == nil {
		l.Namespaces = sandbox.NamespacesUser
		return l
	}
	if os.Geteuid() == 0 && sandbox.ProbeNamespaces(sandbox.NamespacesRoot) == nil {
		l.Namespaces = sandbox.NamespacesRoot
		return l
	}
	l.NoNamespaces = err.Error()
	return l
}
