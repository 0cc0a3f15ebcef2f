package offtree

import (
	"io/fs"
	"syscall"
	"time"
)

// ChangeTime is when the file's inode last changed (its ctime), which no
// process can set back.
func ChangeTime(st fs.FileInfo) time.Time {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return time.Unix(s.Ctim.Sec, s.Ctim.Nsec)
	}
	return st.ModTime()
}
