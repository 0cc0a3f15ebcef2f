//go:build unix

package proc

import (
	"bytes"
	"strconv"
)

// parseStat returns the state and process group of a /proc/PID/stat line:
// "pid (comm) state ppid pgrp ...", where comm may hold spaces and parens.
func parseStat(data []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pg, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], pg, true
}
