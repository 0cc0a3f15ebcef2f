//go:build unix && !linux

package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// SuperviseArg is the argument that makes the runner binary play the
// supervisor, on Linux only.
const SuperviseArg = "__supervise"

// UseSupervisor does nothing outside Linux: commands are started directly
// (the supervisor needs PR_SET_CHILD_SUBREAPER and the parent-death
// signal).
func UseSupervisor(arg0 string) Tracking {
	return Tracking{Note: "the supervisor needs Linux; commands are started directly and tracked by their process group"}
}

// Supervise fails outside Linux.
func Supervise(args []string) int {
	fmt.Fprintln(os.Stderr, "runner: the supervisor needs Linux")
	return 2
}

type supervisorProc struct{}

func startSupervised(context.Context, *supervisorConf, Spec, time.Duration) (child, *commandPipes, error) {
	return nil, nil, errors.New("the supervisor needs Linux")
}

func probePidsAlone() (pidsLimiter, string) {
	return pidsLimiter{}, "cgroups are Linux only"
}
