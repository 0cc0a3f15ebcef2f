//go:build linux

package proc

import (
	"bytes"
	"os"
	"sort"
	"strconv"
	"syscall"
)

// GroupsWithEnv returns the process groups that hold a live process whose
// environment contains every one of the NAME=value entries in env. A
// runner uses it to find what a dead runner's agent left behind when the
// agent's process group id was never recorded: every agent gets
// RUNNER_DIR and RUNNER_ITERATION, and its children inherit them. Groups
// <= 1 and the caller's own group are never returned. Only processes whose
// environment the caller may read are seen (its own user's); the result is
// sorted.
func GroupsWithEnv(env ...string) []int {
	if len(env) == 0 {
		return nil
	}
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil
	}
	self, own := os.Getpid(), syscall.Getpgrp()
	seen := map[int]bool{}
	var groups []int
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' || name == strconv.Itoa(self) {
			continue
		}
		environ, err := os.ReadFile("/proc/" + name + "/environ")
		if err != nil || !hasAll(environ, env) {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		state, pg, ok := parseStat(stat)
		if !ok || state == 'Z' || state == 'X' || pg <= 1 || pg == own || seen[pg] {
			continue
		}
		seen[pg] = true
		groups = append(groups, pg)
	}
	sort.Ints(groups)
	return groups
}

// hasAll reports whether the NUL-separated environ holds every entry.
func hasAll(environ []byte, env []string) bool {
	for _, want := range env {
		found := false
		for _, kv := range bytes.Split(environ, []byte{0}) {
			if string(kv) == want {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
