// Package watch tells a program that some of a few named files changed,
// the way people and programs really change them. It watches the files'
// directories rather than the files, because editors and atomic writers
// save by writing a temporary file and renaming it over the old one (a
// watch on the old file would die with it); it keeps only events whose
// name is one of the files, ignores attribute-only (chmod) events, and
// debounces bursts so that one save gives one notification.
//
// A notification is a hint, not a diff: the receiver re-reads the files
// and decides what changed. Comparing what it reads with what it last
// read or wrote itself is also how a program ignores its own writes.
//
// Until is the wait built on it that the runner's waits share: check a
// condition at once, then again on each change and on a timer, until it
// holds or the context ends.
package watch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is the quiet period after the last event before the
// changed files are reported.
const DefaultDebounce = 100 * time.Millisecond

// Options configure a Watcher.
type Options struct {
	// Debounce is the quiet period after the last relevant event before a
	// batch is delivered; 0 means DefaultDebounce.
	Debounce time.Duration
	// OnError, when set, receives errors the operating system reports
	// while watching (called from the watcher's goroutine). A lost-event
	// overflow is not an error: every file is reported as changed.
	OnError func(error)
}

// Watcher reports changes to a fixed set of files.
type Watcher struct {
	fs       *fsnotify.Watcher
	debounce time.Duration
	onError  func(error)

	files map[string]bool // the files of interest (absolute, clean)
	// dirs holds every directory that contains a file of interest: true
	// when it is watched, false when it does not exist and its parent is
	// watched for its creation.
	dirs map[string]bool

	out       chan []string
	done      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
}

// New starts watching files. Their directories are watched; a directory
// that does not exist yet is waited for through its parent, which must
// exist. The files themselves need not exist.
func New(files []string, opts Options) (*Watcher, error) {
	if len(files) == 0 {
		return nil, errors.New("watch: no files given")
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	w := &Watcher{
		fs:       fw,
		debounce: opts.Debounce,
		onError:  opts.OnError,
		files:    map[string]bool{},
		dirs:     map[string]bool{},
		out:      make(chan []string),
		done:     make(chan struct{}),
	}
	if w.debounce <= 0 {
		w.debounce = DefaultDebounce
	}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			fw.Close()
			return nil, fmt.Errorf("watch %s: %w", f, err)
		}
		w.files[abs] = true
		w.dirs[filepath.Dir(abs)] = false
	}
	for dir := range w.dirs {
		if err := w.arm(dir); err != nil {
			fw.Close()
			return nil, err
		}
	}
	w.wg.Add(1)
	go w.loop()
	return w, nil
}

// arm watches dir, or its parent when dir does not exist yet.
func (w *Watcher) arm(dir string) error {
	err := w.fs.Add(dir)
	if err == nil {
		w.dirs[dir] = true
		return nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("watch %s: %w", dir, err)
	}
	w.dirs[dir] = false
	parent := filepath.Dir(dir)
	if perr := w.fs.Add(parent); perr != nil {
		return fmt.Errorf("watch %s: it does not exist, and its parent cannot be watched: %w", dir, perr)
	}
	// The directory may have appeared between the two calls.
	if st, serr := os.Stat(dir); serr == nil && st.IsDir() {
		if err := w.fs.Add(dir); err == nil {
			w.dirs[dir] = true
		}
	}
	return nil
}

// Changes delivers, after each burst of events has been quiet for the
// debounce period, the sorted list of watched files that changed (were
// created, written, removed or renamed). Batches are merged while the
// receiver is busy, so no change is lost, and the channel is closed by
// Close.
func (w *Watcher) Changes() <-chan []string { return w.out }

// Close stops watching and closes the Changes channel.
func (w *Watcher) Close() error {
	var err error
	w.closeOnce.Do(func() {
		close(w.done)
		err = w.fs.Close()
		w.wg.Wait()
	})
	return err
}

func (w *Watcher) loop() {
	defer w.wg.Done()
	defer close(w.out)
	pending := map[string]bool{}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	quiet := false // the debounce period has passed since the last event
	touch := func(names ...string) {
		for _, n := range names {
			pending[n] = true
		}
		quiet = false
		timer.Reset(w.debounce)
	}
	for {
		var out chan []string
		var batch []string
		if quiet && len(pending) > 0 {
			out = w.out
			batch = sorted(pending)
		}
		select {
		case <-w.done:
			timer.Stop()
			return
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			if names := w.handle(ev); len(names) > 0 {
				touch(names...)
			}
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost: anything may have changed.
				touch(w.allFiles()...)
				continue
			}
			if w.onError != nil && err != nil {
				w.onError(err)
			}
		case <-timer.C:
			quiet = true
		case out <- batch:
			clear(pending)
			quiet = false
		}
	}
}

// handle returns the files of interest an event says changed.
func (w *Watcher) handle(ev fsnotify.Event) []string {
	if !ev.Has(fsnotify.Create | fsnotify.Write | fsnotify.Remove | fsnotify.Rename) {
		return nil // chmod only, or an event kind nobody asked for
	}
	name := filepath.Clean(ev.Name)
	if watched, ok := w.dirs[name]; ok {
		// A directory holding files of interest appeared or went away.
		switch {
		case !watched && ev.Has(fsnotify.Create):
			if err := w.fs.Add(name); err == nil {
				w.dirs[name] = true
			}
			return w.filesIn(name)
		case watched && ev.Has(fsnotify.Remove|fsnotify.Rename):
			w.fs.Remove(name)
			if err := w.arm(name); err != nil && w.onError != nil {
				w.onError(err)
			}
			return w.filesIn(name)
		}
		return nil
	}
	if w.files[name] {
		return []string{name}
	}
	return nil
}

func (w *Watcher) filesIn(dir string) []string {
	var out []string
	for f := range w.files {
		if filepath.Dir(f) == dir {
			out = append(out, f)
		}
	}
	return out
}

func (w *Watcher) allFiles() []string {
	out := make([]string, 0, len(w.files))
	for f := range w.files {
		out = append(out, f)
	}
	return out
}

func sorted(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
