//go:build linux

package proc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A room's process limit (sandbox.Room.MaxProcesses) is, under the
// supervisor, a cgroup pids.max of the command's own: its cgroup v2 where
// the runner's cgroup hands the pids controller down to its children,
// else a cgroup of its own in the cgroup v1 pids hierarchy (hosts with the
// hybrid layout), which the supervisor makes, steps into for the start
// (a child is born in its parent's v1 cgroups) and steps out of again. A
// fork flood then fails inside its room only: every other command,
// another slot's included, is charged nothing.

// probePids finds how commands' processes can be limited: v2parent is the
// cgroup v2 the commands' cgroups are made under ("" when there is none).
// It says why neither cgroup version can.
func probePids(v2parent string) (pidsLimiter, string) {
	var why []string
	if v2parent != "" {
		err := delegatePids(v2parent)
		if err == nil {
			return pidsLimiter{v2: true}, ""
		}
		why = append(why, "cgroup v2: "+err.Error())
	}
	dir, err := ownPidsV1Dir()
	if err == nil {
		err = checkPidsV1(dir)
	}
	if err == nil {
		removeStaleCgroups(dir)
		return pidsLimiter{v1: dir}, ""
	}
	why = append(why, "cgroup v1: "+err.Error())
	return pidsLimiter{}, strings.Join(why, "; ")
}

// probePidsAlone is probePids as UseSupervisor would run it.
func probePidsAlone() (pidsLimiter, string) {
	parent, err := probeCgroup()
	if err != nil {
		parent = ""
	}
	return probePids(parent)
}

// delegatePids makes sure the children of the cgroup v2 parent have the
// pids controller: it is in parent's cgroup.subtree_control, or is put
// there (which the kernel allows for the root cgroup and for one without
// processes of its own).
func delegatePids(parent string) error {
	ctl := filepath.Join(parent, "cgroup.subtree_control")
	if data, err := os.ReadFile(ctl); err == nil && slices.Contains(strings.Fields(string(data)), "pids") {
		return nil
	}
	avail, err := os.ReadFile(filepath.Join(parent, "cgroup.controllers"))
	if err != nil {
		return err
	}
	if !slices.Contains(strings.Fields(string(avail)), "pids") {
		return fmt.Errorf("%s has no pids controller", parent)
	}
	if err := writeCgroupFile(ctl, "+pids"); err != nil {
		return fmt.Errorf("hand the pids controller down from %s: %w", parent, err)
	}
	return nil
}

// ownPidsV1Dir returns the directory of the calling process's cgroup in
// the cgroup v1 pids hierarchy.
func ownPidsV1Dir() (string, error) {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	point, root, ok := pidsV1Mount(mi)
	if !ok {
		return "", errors.New("no cgroup v1 pids hierarchy is mounted")
	}
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(cg), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), "pids") {
			return cgroupDir(point, root, parts[2])
		}
	}
	return "", errors.New("/proc/self/cgroup names no cgroup v1 pids hierarchy")
}

// pidsV1Mount returns where the cgroup v1 hierarchy with the pids
// controller is mounted, and its root, from /proc/self/mountinfo.
func pidsV1Mount(mountinfo []byte) (point, root string, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := slices.Index(f, "-")
		if sep < 6 || sep+3 >= len(f) || f[sep+1] != "cgroup" {
			continue
		}
		if slices.Contains(strings.Split(f[sep+3], ","), "pids") {
			return unescapeMount(f[4]), unescapeMount(f[3]), true
		}
	}
	return "", "", false
}

// checkPidsV1 checks that a cgroup with pids.max can be made in dir and
// processes moved there.
func checkPidsV1(dir string) error {
	probe := filepath.Join(dir, cgroupPrefix+strconv.Itoa(os.Getpid())+"-probe")
	if err := os.Mkdir(probe, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("cannot make a cgroup in %s: %w", dir, err)
	}
	_, err := os.Stat(filepath.Join(probe, "pids.max"))
	unix.Rmdir(probe)
	if err != nil {
		return fmt.Errorf("the cgroups in %s have no pids.max", dir)
	}
	if err := unix.Access(filepath.Join(dir, "cgroup.procs"), unix.W_OK); err != nil {
		return fmt.Errorf("%s/cgroup.procs: %w", dir, err)
	}
	return nil
}

// limitPids bounds the processes of the command the supervisor is about
// to start to n, and returns what to call once the command is started
// (the supervisor steps out of a v1 cgroup) and once nothing of it is
// left (the v1 cgroup is removed).
func (c *command) limitPids(n int) (started, done func(), err error) {
	nop := func() {}
	l := c.pids
	switch {
	case n <= 0 || !l.ok():
		return nop, nop, nil
	case l.v2:
		if c.cg == nil {
			return nil, nil, fmt.Errorf("limit its processes: it has no cgroup v2 (%s)", c.noCgroup)
		}
		if err := writeCgroupFile(filepath.Join(c.cg.dir, "pids.max"), strconv.Itoa(n)); err != nil {
			return nil, nil, fmt.Errorf("limit its processes: %w", err)
		}
		return nop, nop, nil
	}
	c.pidsCgroups++
	dir := filepath.Join(l.v1, fmt.Sprintf("%s%d-%d", cgroupPrefix, c.self, c.pidsCgroups))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("limit its processes: %w", err)
	}
	remove := func() { (&cgroup{dir: dir, fd: -1}).remove() }
	self := strconv.Itoa(c.self)
	if err := writeCgroupFile(filepath.Join(dir, "pids.max"), strconv.Itoa(n)); err != nil {
		remove()
		return nil, nil, fmt.Errorf("limit its processes: %w", err)
	}
	if err := writeCgroupFile(filepath.Join(dir, "cgroup.procs"), self); err != nil {
		remove()
		return nil, nil, fmt.Errorf("limit its processes: enter %s: %w", dir, err)
	}
	back := func() { writeCgroupFile(filepath.Join(l.v1, "cgroup.procs"), self) }
	return back, remove, nil
}
