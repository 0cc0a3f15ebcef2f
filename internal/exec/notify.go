package executor

import (
	"io/fs"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// treeNotify says, on c, that something below a folder was created or
// written: codex's state directory, whose session log (sessions/YYYY/MM/
// DD/rollout-*.jsonl) is created while the agent works. inotify watches
// one folder at a time, so each folder created below is watched as it
// appears. Without inotify, c never fires and the caller's timer is all.
type treeNotify struct {
	fs *fsnotify.Watcher
	c  chan struct{}
	// done ends the goroutine that forwards the events.
	done chan struct{}
}

// newTreeNotify watches root and the folders below it.
func newTreeNotify(root string) *treeNotify {
	n := &treeNotify{c: make(chan struct{}, 1), done: make(chan struct{})}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return n
	}
	n.fs = fw
	n.addTree(root)
	go n.forward()
	return n
}

// addTree watches dir and every folder below it (links not followed).
func (n *treeNotify) addTree(dir string) {
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			n.fs.Add(path)
		}
		return nil
	})
}

// forward turns the watcher's events into a signal on c (at most one
// pending), watching the folders created meanwhile.
func (n *treeNotify) forward() {
	for {
		select {
		case <-n.done:
			return
		case ev, ok := <-n.fs.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) {
				n.addTree(ev.Name) // a folder: watch it and what it already holds
			}
			if ev.Has(fsnotify.Create | fsnotify.Write) {
				select {
				case n.c <- struct{}{}:
				default:
				}
			}
		case _, ok := <-n.fs.Errors:
			if !ok {
				return
			}
		}
	}
}

// close stops watching.
func (n *treeNotify) close() {
	if n.fs == nil {
		return
	}
	close(n.done)
	n.fs.Close()
}
