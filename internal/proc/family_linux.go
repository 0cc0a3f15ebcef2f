//go:build linux

package proc

import (
	"os"
	"strconv"
)

// processTable reads the state, parent and process group of every process
// in /proc. A process that exits while it is read is left out.
func processTable() map[int]procStat {
	list, ok := pids()
	if !ok {
		return nil
	}
	table := make(map[int]procStat, len(list))
	for _, pid := range list {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		if st, ok := parseProcStat(data); ok {
			table[pid] = st
		}
	}
	return table
}

// descendants returns the live processes below root in table: its
// children, their children, and so on. Zombies are left out, but their
// children are not.
func descendants(table map[int]procStat, root int) []int {
	children := make(map[int][]int)
	for pid, st := range table {
		children[st.ppid] = append(children[st.ppid], pid)
	}
	var out []int
	queue := []int{root}
	seen := map[int]bool{root: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if seen[c] {
				continue
			}
			seen[c] = true
			queue = append(queue, c)
			if !table[c].dead() {
				out = append(out, c)
			}
		}
	}
	return out
}
