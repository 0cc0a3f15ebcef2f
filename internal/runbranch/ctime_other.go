//go:build !linux

package runbranch

import (
	"os"
	"time"
)

// inodeChanged is the file's modification time, where its ctime is not
// read.
func inodeChanged(st os.FileInfo) time.Time { return st.ModTime() }
