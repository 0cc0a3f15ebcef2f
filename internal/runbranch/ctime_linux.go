package runbranch

import (
	"os"
	"syscall"
	"time"
)

// inodeChanged is when the file's inode last changed (its ctime), or
// its modification time when later: a program can set the one back, not
// the other.
func inodeChanged(st os.FileInfo) time.Time {
	t := st.ModTime()
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		if c := time.Unix(s.Ctim.Sec, s.Ctim.Nsec); c.After(t) {
			return c
		}
	}
	return t
}
