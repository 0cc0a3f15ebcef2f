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
	return GroupsWithEnvSince(PIDMark{}, env...)
}

// PIDMark is where the kernel's allocation of process ids stood when a
// process was started (see MarkPIDs).
type PIDMark struct {
	pid   int   // the process started; 0: no mark
	forks int64 // processes created since boot, then
}

// MarkPIDs returns the mark of pid, a process just started: every process
// it starts gets a larger id until the ids wrap around.
func MarkPIDs(pid int) PIDMark {
	forks := forkCount()
	if forks < 0 {
		return PIDMark{}
	}
	return PIDMark{pid: pid, forks: forks}
}

// GroupsWithEnvSince is GroupsWithEnv for processes started since mark
// (a zero mark: any process). When the ids allocated since the mark
// provably did not wrap around, only processes with an id at least the
// marked one are read, which spares reading the environment of every
// other process on the machine; otherwise every process is read.
func GroupsWithEnvSince(mark PIDMark, env ...string) []int {
	if len(env) == 0 {
		return nil
	}
	list, ok := pids()
	if !ok {
		return nil
	}
	minPID := 0
	if mark.pid > 0 && !wrappedSince(mark, len(list)) {
		minPID = mark.pid
	}
	self, own := os.Getpid(), syscall.Getpgrp()
	seen := map[int]bool{}
	var groups []int
	var buf []byte
	for _, pid := range list {
		if pid == self || pid < minPID {
			continue
		}
		name := strconv.Itoa(pid)
		environ, err := ReadEnviron(pid, buf)
		if environ != nil {
			buf = environ
		}
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

// wrappedSince reports whether process ids may have wrapped around since
// mark, with live processes on the machine now. Ids are allocated in
// increasing order from the last one given, skipping ids in use, and
// start again low after pid_max. The last id given is below the marked
// one after a wrap; it can be above again only after a whole cycle, which
// takes at least pid_max - 300 (the reserved ids) - live new processes.
// Anything unreadable counts as a wrap.
func wrappedSince(mark PIDMark, live int) bool {
	last, err1 := readInt("/proc/sys/kernel/ns_last_pid")
	max, err2 := readInt("/proc/sys/kernel/pid_max")
	forks := forkCount()
	if err1 != nil || err2 != nil || forks < 0 {
		return true
	}
	return last < int64(mark.pid) || forks-mark.forks+int64(live) >= max-300
}

// forkCount returns the number of processes created since boot (the
// "processes" line of /proc/stat), or -1.
func forkCount() int64 {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return -1
	}
	i := bytes.Index(data, []byte("\nprocesses "))
	if i < 0 {
		return -1
	}
	line := data[i+len("\nprocesses "):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	n, err := strconv.ParseInt(string(line), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func readInt(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 64)
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
