//go:build unix && !linux

package proc

import (
	"errors"
	"time"
)

// GroupsWithEnv finds process groups by environment on Linux only (it
// reads /proc/PID/environ); elsewhere it returns nil.
func GroupsWithEnv(env ...string) []int { return nil }

// PIDMark is where the kernel's allocation of process ids stood when a
// process was started; only Linux uses it.
type PIDMark struct{}

// MarkPIDs returns an empty mark outside Linux.
func MarkPIDs(pid int) PIDMark { return PIDMark{} }

// GroupsWithEnvSince finds process groups by environment on Linux only;
// elsewhere it returns nil.
func GroupsWithEnvSince(mark PIDMark, env ...string) []int { return nil }

// CgroupsWithEnv finds cgroups on Linux only; elsewhere it returns nil.
func CgroupsWithEnv(env ...string) []string { return nil }

// KillCgroup does nothing outside Linux, where there are no cgroups to
// find.
func KillCgroup(dir string, grace time.Duration) error { return nil }

// ReadEnviron reads a process's environment on Linux only (from
// /proc/PID/environ); elsewhere it returns an error.
func ReadEnviron(pid int, buf []byte) ([]byte, error) {
	return nil, errors.New("reading another process's environment needs Linux's /proc")
}
