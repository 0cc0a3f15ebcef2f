package git

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// tempIndex is a temporary index file in a working tree's git dir (see
// Snapshot).
type tempIndex struct {
	path string
	// real is the working tree's index as it was when it was copied (nil:
	// there was none), for install to see whether it changed since.
	real fs.FileInfo
}

// tempIndexPrefix starts the name of every temporary index in a git dir.
const tempIndexPrefix = "runner-index-"

// newTempIndex makes a temporary index in the working tree's git dir: a
// copy of its index when seed is set and it has one; otherwise the name
// of a file that does not exist, which git reads as an empty index.
func (r *Repo) newTempIndex(seed bool) (*tempIndex, error) {
	f, err := os.CreateTemp(r.gitDir, tempIndexPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("create a temporary index: %w", err)
	}
	t := &tempIndex{path: f.Name()}
	src, err := os.Open(filepath.Join(r.gitDir, "index"))
	if err == nil {
		t.real, err = src.Stat()
		if err == nil && seed {
			_, err = io.Copy(f, src)
		}
		src.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && seed && t.real != nil {
		// The copy keeps the index's time: git takes entries as changed
		// in the same second as the index was written ("racily clean")
		// by comparing the two, and must see what it would see in the
		// index itself.
		err = os.Chtimes(t.path, t.real.ModTime(), t.real.ModTime())
	}
	if errors.Is(err, fs.ErrNotExist) || err == nil && !seed {
		os.Remove(t.path)
		return t, nil
	}
	if err != nil {
		os.Remove(t.path)
		return nil, fmt.Errorf("copy the index to a temporary one: %w", err)
	}
	return t, nil
}

// remove removes the temporary index and the lock file a killed git may
// have left beside it. A nil *tempIndex is fine.
func (t *tempIndex) remove() {
	if t != nil {
		os.Remove(t.path)
		os.Remove(t.path + ".lock")
	}
}

// setPending makes t the temporary index kept for AdvanceHead, removing
// the one kept before. At most one is kept per Repo.
func (r *Repo) setPending(t *tempIndex) {
	r.pendingMu.Lock()
	old := r.pending
	r.pending = t
	r.pendingMu.Unlock()
	if old != t {
		old.remove()
	}
}

// takePending gives the caller t, if it is the one kept; true when it
// did, and then the caller removes it.
func (r *Repo) takePending(t *tempIndex) bool {
	r.pendingMu.Lock()
	defer r.pendingMu.Unlock()
	if t == nil || r.pending != t {
		return false
	}
	r.pending = nil
	return true
}

// install makes t the working tree's index, under git's own lock: t is
// linked as index.lock (which fails when a git command holds the lock),
// then renamed over the index. It does nothing, and returns false, when
// the index changed since t was copied from it (another inode, size or
// time): someone else's change to it would be lost.
func (r *Repo) install(t *tempIndex) bool {
	index := filepath.Join(r.gitDir, "index")
	now, err := os.Stat(index)
	switch {
	case t.real == nil && !errors.Is(err, fs.ErrNotExist):
		return false
	case t.real != nil && (err != nil || !os.SameFile(now, t.real) || now.Size() != t.real.Size() || !now.ModTime().Equal(t.real.ModTime())):
		return false
	}
	lock := index + ".lock"
	if os.Link(t.path, lock) != nil {
		return false
	}
	if os.Rename(lock, index) != nil {
		os.Remove(lock)
		return false
	}
	os.Remove(t.path) // the other name of the new index
	return true
}

// staleIndexAge is the age past which Open removes temporary indexes: no
// git call lives that long, so they are leftovers of a runner killed in
// the middle of a snapshot.
const staleIndexAge = time.Hour

// removeStaleIndexes removes the temporary indexes left in the git dir
// by runners that were killed.
func (r *Repo) removeStaleIndexes() {
	names, _ := filepath.Glob(filepath.Join(r.gitDir, tempIndexPrefix+"*"))
	for _, n := range names {
		if st, err := os.Lstat(n); err == nil && time.Since(st.ModTime()) > staleIndexAge {
			os.Remove(n)
		}
	}
}
