//go:build unix

package proc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"time"
)

// useTestSupervisor makes Run start commands under the supervisor, played
// by the test binary (see TestMain), where the system has one.
func useTestSupervisor() {
	t := UseSupervisor(os.Args[0])
	if runtime.GOOS == "linux" && !t.Supervised {
		fmt.Fprintln(os.Stderr, "proc tests: no supervisor:", t.Note)
	}
}

// miniRunnerEnv holds a miniRun as JSON: the test binary then plays a
// runner that runs one command through Run, so that a test can kill that
// runner.
const miniRunnerEnv = "PROC_TEST_MINI_RUNNER"

type miniRun struct {
	Argv     []string      `json:"argv"`
	Dir      string        `json:"dir"`
	Grace    time.Duration `json:"grace"`
	Direct   bool          `json:"direct"`    // without the supervisor
	NoCgroup bool          `json:"no_cgroup"` // with the supervisor but no cgroup
}

// miniRunner runs the command of $PROC_TEST_MINI_RUNNER and exits with
// its exit status.
func miniRunner(spec string) int {
	var m miniRun
	if err := json.Unmarshal([]byte(spec), &m); err != nil {
		fmt.Fprintln(os.Stderr, "mini runner:", err)
		return 125
	}
	if !m.Direct {
		useTestSupervisor()
	}
	if sc := supervisorConfig.Load(); sc != nil && m.NoCgroup {
		supervisorConfig.Store(&supervisorConf{path: sc.path, arg0: sc.arg0, noCgroup: true})
	}
	r := Run(context.Background(), Spec{Argv: m.Argv, Dir: m.Dir, Grace: m.Grace, Log: m.Dir + "/out.log"})
	if r.StartErr != nil {
		fmt.Fprintln(os.Stderr, "mini runner:", r.StartErr)
		return 125
	}
	return r.ExitCode
}
