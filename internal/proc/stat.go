//go:build unix

package proc

import (
	"bytes"
	"strconv"
)

// procStat is what the runner reads of a /proc/PID/stat line.
type procStat struct {
	state      byte // R, S, D, Z (zombie), X (dead), ...
	ppid, pgrp int
}

// dead reports whether the process has exited (a zombie counts as dead).
func (s procStat) dead() bool { return s.state == 'Z' || s.state == 'X' }

// parseProcStat parses a /proc/PID/stat line: "pid (comm) state ppid pgrp
// ...", where comm may hold spaces and parens.
func parseProcStat(data []byte) (procStat, bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pg, err2 := strconv.Atoi(string(f[2]))
	if err1 != nil || err2 != nil {
		return procStat{}, false
	}
	return procStat{state: f[0][0], ppid: ppid, pgrp: pg}, true
}

// parseStat returns the state and process group of a /proc/PID/stat line.
func parseStat(data []byte) (state byte, pgrp int, ok bool) {
	s, ok := parseProcStat(data)
	return s.state, s.pgrp, ok
}
