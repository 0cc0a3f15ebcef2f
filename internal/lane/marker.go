package lane

import (
	"os"
	"path/filepath"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/offtree"
	"github.com/runner-cli/runner/internal/state"
)

// When the work on a task starts is kept by a marker in the lane's git
// folder, which its agent cannot reach when confined (and which judges
// it when not): its change time is the start, its content names the
// task.

// startWork marks the start of the work on meta's task in the lane,
// unless the marker already names that task (a later attempt goes on
// from the earlier one's work, and what they made is all new).
func (l *Local) startWork(meta *state.Meta) {
	if l.tree == nil {
		return
	}
	marker := filepath.Join(l.tree.Repo().GitDir(), workSinceFile)
	if data, err := fsutil.ReadLimited(marker, 4<<10, true); err == nil && string(data) == meta.Node+"\n" {
		return
	}
	if err := fsutil.WriteFileAtomic(marker, []byte(meta.Node+"\n"), 0o644); err != nil {
		l.env.Log.Warn("could not mark when the work on the task started: files it makes outside the judged tree may reach its guards", "node", meta.Node, "err", err)
	}
}

// workSince is when the work on node started in the lane: the marker's
// change time, when it names node.
func (l *Local) workSince(node string) (time.Time, bool) {
	marker := filepath.Join(l.tree.Repo().GitDir(), workSinceFile)
	data, err := fsutil.ReadLimited(marker, 4<<10, true)
	if err != nil || string(data) != node+"\n" {
		return time.Time{}, false
	}
	st, err := os.Lstat(marker)
	if err != nil {
		return time.Time{}, false
	}
	return offtree.ChangeTime(st), true
}
