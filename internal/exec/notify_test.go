package executor

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A file written in folders created after the watch began is notified:
// codex creates sessions/YYYY/MM/DD/ and its log while the agent works.
func TestTreeNotifyFollowsNewFolders(t *testing.T) {
	root := t.TempDir()
	n := newTreeNotify(root)
	defer n.close()
	if n.fs == nil {
		t.Skip("no inotify here: the session log is read on a timer alone")
	}
	dir := filepath.Join(root, "sessions", "2026", "11", "29")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	drain := func() {
		for {
			select {
			case <-n.c:
			case <-time.After(100 * time.Millisecond):
				return
			}
		}
	}
	drain()
	if err := os.WriteFile(filepath.Join(dir, "rollout-1.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-n.c:
	case <-time.After(30 * time.Second):
		t.Fatal("no notice of a log written three folders below a folder created after the watch began")
	}
}
