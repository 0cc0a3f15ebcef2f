//go:build linux

package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"
)

// CgroupsWithEnv returns the cgroups of supervised commands (below the
// caller's own cgroup) that hold a live process whose environment
// contains every one of the NAME=value entries in env. Everything in such
// a cgroup belongs to the command its supervisor ran, also what cleared
// its environment, so a runner resuming a dead runner's iteration stops
// the whole cgroup (KillCgroup): one whose supervisor was killed too,
// which nothing else would stop, or one whose supervisor is still
// stopping it, which the runner then does not have to wait for. The
// result is sorted.
func CgroupsWithEnv(env ...string) []string {
	if len(env) == 0 {
		return nil
	}
	parent, err := ownCgroupDir()
	if err != nil {
		return nil
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var dirs []string
	var buf []byte
	for _, e := range entries {
		if _, probe, ok := cgroupOwner(e.Name()); !ok || probe || !e.IsDir() {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		for _, pid := range cgroupProcs(dir) {
			environ, err := ReadEnviron(pid, buf)
			if environ != nil {
				buf = environ
			}
			if err == nil && hasAll(environ, env) {
				dirs = append(dirs, dir)
				break
			}
		}
	}
	sort.Strings(dirs)
	return dirs
}

// KillCgroup stops every process of a supervised command's cgroup (see
// CgroupsWithEnv): SIGTERM, up to grace for the cgroup to empty,
// then SIGKILL through cgroup.kill; then it removes the cgroup. A cgroup
// that is already gone is not an error.
func KillCgroup(dir string, grace time.Duration) error {
	cg := &cgroup{dir: dir, fd: -1}
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return nil
	}
	empty := func() bool { return !cg.populated() }
	if !empty() {
		for _, pid := range cg.procs() {
			syscall.Kill(pid, syscall.SIGTERM)
		}
		if !waitFor(empty, time.Now().Add(grace)) {
			if err := cg.kill(); err != nil {
				return fmt.Errorf("kill cgroup %s: %w", dir, err)
			}
			if !waitFor(empty, time.Now().Add(killWait)) {
				return fmt.Errorf("kill cgroup %s: still populated %s after SIGKILL", dir, killWait)
			}
		}
	}
	return cg.remove()
}
