package worksnap

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/runner-cli/runner/internal/fsutil"
)

// Change is a path whose content differs from the snapshot.
type Change struct {
	Path   string `json:"path"`
	Change string `json:"change"` // "modified", "deleted" or "added"
	// Kept is where the changed version was kept, relative to the keep
	// folder ("" for a deletion, or a folder).
	Kept string `json:"kept,omitempty"`
	// Lost is set for a change that could not be put back (no copy was
	// kept of the file, past the size limit), with why.
	Lost string `json:"lost,omitempty"`
}

// Changes compares the tree with the snapshot: every path added,
// deleted, or modified (another kind, content, link target or mode), in
// path order. A file with a copy is compared by content, one without by
// size and modification time.
func (s *Snapshot) Changes() ([]Change, error) {
	r, err := os.OpenRoot(s.Root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []Change
	seen := map[string]bool{}
	err = walk(r, ".", s.Exclude, func(p string, info fs.FileInfo) error {
		seen[p] = true
		e := s.byPath[p]
		if e == nil {
			out = append(out, Change{Path: p, Change: "added"})
			return nil
		}
		same, err := s.same(r, e, info)
		if err != nil {
			return err
		}
		if !same {
			out = append(out, Change{Path: p, Change: "modified"})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, e := range s.Entries {
		if !seen[e.Path] && !under(e.Path, out) {
			out = append(out, Change{Path: e.Path, Change: "deleted"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// under reports whether p lies under a path changes holds as modified:
// a folder that became a file or a link hides what it held.
func under(p string, changes []Change) bool {
	for _, c := range changes {
		if strings.HasPrefix(p, c.Path+"/") {
			return true
		}
	}
	return false
}

func (s *Snapshot) same(r *os.Root, e *Entry, info fs.FileInfo) (bool, error) {
	switch {
	case info.IsDir():
		return e.Kind == KindDir && e.Mode == info.Mode().Perm(), nil
	case info.Mode()&fs.ModeSymlink != 0:
		if e.Kind != KindLink {
			return false, nil
		}
		t, err := r.Readlink(e.Path)
		return t == e.Target, err
	}
	if e.Kind != KindFile || e.Size != info.Size() || e.Mode != info.Mode().Perm() {
		return false, nil
	}
	if e.Copy == "" {
		return info.ModTime().UTC().Equal(e.MTime), nil
	}
	sum, err := sumOf(r, e.Path)
	return sum == e.Sum, err
}

// Restore puts the tree back to the snapshot and returns what it undid.
// The changed and added files are first kept under keep (a folder of the
// runner's own, same relative paths); a folder that is no longer one is
// made a folder again before anything beneath it is written.
func (s *Snapshot) Restore(keep string) ([]Change, error) {
	changes, err := s.Changes()
	if err != nil || len(changes) == 0 {
		return changes, err
	}
	r, err := os.OpenRoot(s.Root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for i := range changes { // in path order: a folder before what it holds
		c := &changes[i]
		e := s.byPath[c.Path]
		if info, err := r.Lstat(c.Path); err == nil && info.IsDir() && e != nil && e.Kind == KindDir {
			if err := r.Chmod(c.Path, e.Mode); err != nil { // a folder whose mode changed
				return changes, fmt.Errorf("undo %s: %w", c.Path, err)
			}
			continue
		}
		if c.Change != "deleted" {
			if c.Kept, err = keepAside(r, c.Path, keep); err != nil {
				return changes, fmt.Errorf("keep %s: %w", c.Path, err)
			}
			if err := r.RemoveAll(c.Path); err != nil {
				return changes, fmt.Errorf("undo %s: %w", c.Path, err)
			}
		}
		if e != nil {
			if err := s.put(r, e, c); err != nil {
				return changes, fmt.Errorf("put back %s: %w", c.Path, err)
			}
		}
	}
	// What was under a folder that is back now.
	done := make(map[string]bool, len(changes))
	for _, c := range changes {
		done[c.Path] = true
	}
	for i := range s.Entries {
		e := &s.Entries[i]
		if _, err := r.Lstat(e.Path); errors.Is(err, fs.ErrNotExist) && !done[e.Path] {
			c := Change{Path: e.Path, Change: "deleted"}
			if err := s.put(r, e, &c); err != nil {
				return changes, fmt.Errorf("put back %s: %w", e.Path, err)
			}
			if c.Lost != "" {
				changes = append(changes, c)
			}
		}
	}
	return changes, nil
}

// put writes entry e back into the tree.
func (s *Snapshot) put(r *os.Root, e *Entry, c *Change) error {
	if err := r.MkdirAll(path.Dir(e.Path), 0o755); err != nil && path.Dir(e.Path) != "." {
		return err
	}
	switch e.Kind {
	case KindDir:
		if err := r.MkdirAll(e.Path, 0o755); err != nil {
			return err
		}
		return r.Chmod(e.Path, e.Mode)
	case KindLink:
		return r.Symlink(e.Target, e.Path)
	}
	if e.Copy == "" {
		c.Lost = "no copy was kept of it: the tree is larger than the copies the runner keeps without git"
		return nil
	}
	in, err := fsutil.Open(filepath.Join(s.Dir, "files", e.Copy))
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := r.OpenFile(e.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, e.Mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = r.Chmod(e.Path, e.Mode)
	}
	if err == nil {
		err = r.Chtimes(e.Path, e.MTime, e.MTime)
	}
	return err
}

// keepAside copies what path p of r holds now (a file's content, a
// link's target as text; every file of a folder) under keep, and returns
// where, relative to keep.
func keepAside(r *os.Root, p, keep string) (string, error) {
	info, err := r.Lstat(p)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(keep, filepath.FromSlash(p))
	switch {
	case info.IsDir():
		err := walk(r, p, nil, func(q string, fi fs.FileInfo) error {
			if q == p || fi.IsDir() {
				return nil
			}
			_, err := keepAside(r, q, keep)
			return err
		})
		return "", err
	case info.Mode()&fs.ModeSymlink != 0:
		t, err := r.Readlink(p)
		if err != nil {
			return "", err
		}
		if err := fsutil.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", err
		}
		return p + ".symlink", fsutil.ReplaceFile(dst+".symlink", []byte(t+"\n"), 0o644, fsutil.NotSynced)
	}
	if err := fsutil.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	_, err = copyOut(r, p, dst)
	return p, err
}
