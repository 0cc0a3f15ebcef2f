//go:build linux

package proc

import "os"

// groupAlive reports whether the process group has a member that is not a
// zombie. Orphaned children are reparented to PID 1, which in some
// containers never reaps them, so signal 0 alone would report a killed
// group as alive forever.
func groupAlive(pgid int) bool {
	if !killZero(pgid) {
		return false
	}
	d, err := os.Open("/proc")
	if err != nil {
		return true
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return true
	}
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		data, err := os.ReadFile("/proc/" + name + "/stat")
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
