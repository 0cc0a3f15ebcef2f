package watch

import (
	"context"
	"time"
)

// Defaults of Until.
const (
	// DefaultRecheck is how often Until checks while it watches the files,
	// without being told that one changed.
	DefaultRecheck = 5 * time.Second
	// DefaultPoll is how often Until checks when the files cannot be
	// watched at all.
	DefaultPoll = time.Second
)

// Wait configures Until.
type Wait struct {
	// Options configure the watcher: its debounce period, and OnError for
	// the errors the system reports while watching.
	Options
	// Recheck is how often check runs while the files are watched and no
	// change is reported: a fallback for notifications a file system
	// loses, and the only way to see a change no file shows (a runner
	// that exits frees its lock without writing). 0 means DefaultRecheck.
	Recheck time.Duration
	// Poll is how often check runs when the files cannot be watched (no
	// inotify instance left, a folder that cannot be watched); 0 means
	// DefaultPoll.
	Poll time.Duration
	// Unwatched, when set, is told why the files cannot be watched, once,
	// before Until falls back to checking every Poll.
	Unwatched func(error)
}

// Until runs check at once, then again after each change to one of files
// (debounced, as Watcher reports them) and every Recheck, until check
// returns true or ctx ends. It returns nil when check returned true, and
// ctx's error when ctx ended first; ctx is looked at before each check.
//
// The files are watched before the first check, so a change made at any
// moment after the caller last read them is seen by that check or wakes
// the next one. check runs on the caller's goroutine, one call at a time;
// a change reported while it runs makes it run once more. What changed is
// check's to find out: a notification is a hint, and comparing what it
// reads with what it read before is also how a caller ignores its own
// writes.
func Until(ctx context.Context, files []string, wt Wait, check func() bool) error {
	period := wt.Recheck
	if period <= 0 {
		period = DefaultRecheck
	}
	var changes <-chan []string
	w, err := New(files, wt.Options)
	if err != nil {
		if wt.Unwatched != nil {
			wt.Unwatched(err)
		}
		period = wt.Poll
		if period <= 0 {
			period = DefaultPoll
		}
	} else {
		defer w.Close()
		changes = w.Changes()
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if check() {
			return nil
		}
		select {
		case <-ctx.Done():
		case _, ok := <-changes:
			if !ok {
				changes = nil
			}
		case <-tick.C:
		}
	}
}
