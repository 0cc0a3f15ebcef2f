//go:build linux

package proc

import (
	"os"
	"strconv"
)

// pids lists the ids of the processes in /proc, in no order; ok is false
// when /proc cannot be read.
func pids() (list []int, ok bool) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, false
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, false
	}
	list = make([]int, 0, len(names))
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		if pid, err := strconv.Atoi(name); err == nil {
			list = append(list, pid)
		}
	}
	return list, true
}
