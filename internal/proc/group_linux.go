//go:build linux

package proc

import (
	"os"
	"strconv"
)

// groupAlive reports whether the process group has a member that is not a
// zombie. Orphaned children are reparented to PID 1, which in some
// containers never reaps them, so signal 0 alone would report a killed
// group as alive forever.
func groupAlive(pgid int) bool {
	if !killZero(pgid) {
		return false
	}
	list, ok := pids()
	if !ok {
		return true
	}
	for _, pid := range list {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue // the process went away while we looked
		}
		state, pg, ok := parseStat(data)
		if ok && pg == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}
