//go:build !linux

package offtree

import (
	"io/fs"
	"time"
)

// ChangeTime is the file's modification time where the change time is
// not read: weaker, since a process can set it back.
func ChangeTime(st fs.FileInfo) time.Time { return st.ModTime() }
