//go:build unix

package proc

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/runner-cli/runner/internal/sandbox"
)

// confineConf is the binary Run confines commands with.
type confineConf struct {
	path string // the file executed
	arg0 string // its argv[0]
}

// confineConfig is set by UseConfinement; nil: the supervisor's binary.
var confineConfig atomic.Pointer[confineConf]

// UseConfinement makes Run start the commands whose Spec.Confine is set
// through path, a binary that plays `__confine` (sandbox.ConfineArg, as
// every binary linking package sandbox does), started with path as its
// argv[0]. Without it, Run uses the supervisor's binary (UseSupervisor):
// /proc/self/exe, the running binary even once replaced on disk, with the
// supervisor's argv[0]; the runner needs nothing else. With neither, a
// confined command does not start. UseConfinement("") forgets an earlier
// call.
func UseConfinement(path string) {
	if path == "" {
		confineConfig.Store(nil)
		return
	}
	confineConfig.Store(&confineConf{path: path, arg0: path})
}

// confineBinary returns the binary that confines commands, or nil.
func confineBinary() *confineConf {
	if cc := confineConfig.Load(); cc != nil {
		return cc
	}
	if sc := supervisorConfig.Load(); sc != nil {
		return &confineConf{path: sc.path, arg0: sc.arg0}
	}
	return nil
}

// landlockABI is sandbox.ABI, replaced by tests.
var landlockABI = sandbox.ABI

// confineSpec turns s, whose Confine is set, into the command that runs
// it confined: the runner's binary in sandbox.ConfineArg mode. The
// program is found here, as for a command that is not confined (a bare
// name in the runner's $PATH, which the confined command then gets as
// its argv[0]; a path relative to Dir), so that a missing one is a
// StartErr too. An error means the command must not start.
func confineSpec(s *Spec) error {
	prog := s.Argv[0]
	abi, err := landlockABI()
	if abi < 1 {
		return fmt.Errorf("start %s: cannot confine it: %v", prog, err)
	}
	if err := s.Confine.Check(); err != nil {
		return fmt.Errorf("start %s: cannot confine it: %w", prog, err)
	}
	cc := confineBinary()
	if cc == nil {
		return fmt.Errorf("start %s: cannot confine it: no binary to confine it with (see proc.UseConfinement)", prog)
	}
	if !strings.Contains(prog, "/") {
		lp, err := exec.LookPath(prog)
		if err != nil {
			return fmt.Errorf("start %s: %w", prog, err)
		}
		prog = lp
	} else {
		p := prog
		if !filepath.IsAbs(p) && s.Dir != "" {
			p = filepath.Join(s.Dir, p)
		}
		if _, err := exec.LookPath(p); err != nil {
			return fmt.Errorf("start %s: %w", prog, err)
		}
	}
	argv := append([]string{prog}, s.Argv[1:]...)
	s.Argv = sandbox.Wrap(cc.arg0, *s.Confine, argv)
	s.exe = cc.path
	return nil
}

// ProcessLimit says how the processes of a confined command whose room
// sets MaxProcesses are bounded by a cgroup (see pidslimit_linux.go):
// "cgroup v2 pids.max" or "cgroup v1 pids.max (under DIR)"; "" when by
// none, and why. Commands started directly (UseConfinement) have none;
// before UseSupervisor, it says what the supervisor would find.
func ProcessLimit() (how, why string) {
	sc := supervisorConfig.Load()
	if sc == nil && confineConfig.Load() != nil {
		return "", "commands are not started under the supervisor"
	}
	if sc == nil {
		l, why := probePidsAlone()
		if l.ok() {
			return l.String(), ""
		}
		return "", why
	}
	if sc.pids.ok() {
		return sc.pids.String(), ""
	}
	return "", sc.pidsNote
}
