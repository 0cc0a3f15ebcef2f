//go:build linux

package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/runner-cli/runner/internal/proc"
)

// probeCgroup checks what internal/proc's UseSupervisor checks, without
// its side effects (it removes stale cgroups and starts a supervisor):
// the supervisor needs /proc/self/exe; each command's cgroup is a child
// of the runner's own cgroup v2, which must take a new child with
// cgroup.kill (Linux 5.14) and whose cgroup.procs must be writable. The
// child is made empty and removed at once; it is named as proc names its
// probes ("runner-PID-probe"), so a runner removes it should this process
// die in between.
func probeCgroup() Cgroup {
	if _, err := os.Stat("/proc/self/exe"); err != nil {
		return Cgroup{Note: fmt.Sprintf("no supervisor (%v): commands are started directly and tracked by their process group", err)}
	}
	dir, err := proc.OwnCgroupDir()
	c := Cgroup{Note: fmt.Sprint(err)}
	if err == nil {
		c = checkCgroupDir(dir)
	}
	if !c.OK {
		c.Note += "; the supervisor tracks each command's processes as their subreaper"
	}
	return c
}

// checkCgroupDir checks that a child cgroup of dir can be made and
// commands started in it.
func checkCgroupDir(dir string) Cgroup {
	child := filepath.Join(dir, "runner-"+strconv.Itoa(os.Getpid())+"-probe")
	if err := unix.Mkdir(child, 0o755); err != nil {
		return Cgroup{Dir: dir, Note: fmt.Sprintf("cannot make a cgroup in %s: %v", dir, err)}
	}
	_, kerr := os.Stat(filepath.Join(child, "cgroup.kill"))
	if err := unix.Rmdir(child); err != nil {
		return Cgroup{Dir: dir, Note: fmt.Sprintf("cannot remove the cgroup %s: %v", child, err)}
	}
	if kerr != nil {
		return Cgroup{Dir: dir, Note: fmt.Sprintf("the cgroups in %s have no cgroup.kill (Linux 5.14 or later is needed)", dir)}
	}
	if err := unix.Access(filepath.Join(dir, "cgroup.procs"), unix.W_OK); err != nil {
		return Cgroup{Dir: dir, Note: fmt.Sprintf("%s/cgroup.procs is not writable: %v", dir, err)}
	}
	return Cgroup{OK: true, Dir: dir}
}
