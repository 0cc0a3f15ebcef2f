// Package offtree keeps the guards to what lands (SPEC §18, §20): what a
// working tree holds outside its judged tree (ignored files, repositories
// of their own: everything `git add -A` leaves out) and that was made or
// changed while the task was worked on is moved out of the working tree
// before the guards run, and put back after them. What was there before
// (dependencies, caches) stays where it is, usable.
//
// "Made or changed since" is told by each file's change time (ctime),
// which the kernel sets and no process can set back: a file an agent
// wrote, renamed, or changed the mode of has a ctime after the time the
// work started. A folder whose content is all new moves whole; in an
// older folder (node_modules), only the new content moves.
//
// What is moved goes into a folder of the runner's own, each entry under
// a number, listed in a manifest before it moves, so that a runner killed
// between the two steps puts everything back the next time (Restore).
package offtree

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/runner-cli/runner/internal/fsutil"
)

// manifest names, in a hiding folder, the file listing what moved: one
// line per entry, "N\tPATH" (PATH relative to the working tree's top).
const manifest = "moved.txt"

// Result is what Hide did.
type Result struct {
	// Moved are the paths moved out of the working tree, as the manifest
	// lists them (a folder ends with "/").
	Moved []string
	// Stuck are the paths that were to move and could not (on another
	// file system than the hiding folder, say): the guards would see
	// them, so the attempt fails naming them.
	Stuck []string
	// Files counts the files and links looked at.
	Files int
}

// Hide moves out of the working tree at top what roots name (relative to
// top, with slashes, a folder ending with "/": git.Repo.Outside) and was
// made or changed at or after since, into dir. Restore puts it back.
// What a previous Hide left in dir is put back first.
func Hide(top string, roots []string, since time.Time, dir string) (Result, error) {
	if _, err := Restore(top, dir); err != nil {
		return Result{}, err
	}
	if err := fsutil.MkdirAll(dir, 0o700); err != nil {
		return Result{}, fmt.Errorf("hide what is outside the judged tree: %w", err)
	}
	list, err := fsutil.OpenAppend(filepath.Join(dir, manifest))
	if err != nil {
		return Result{}, fmt.Errorf("hide what is outside the judged tree: %w", err)
	}
	defer list.Close()
	h := &hider{top: top, dir: dir, since: since, list: list}
	for _, root := range roots {
		rel := strings.TrimSuffix(path.Clean("/" + root)[1:], "/")
		if rel == "" || rel == "." {
			continue
		}
		fresh, err := h.visit(rel)
		if err != nil {
			return h.res, err
		}
		if fresh {
			if err := h.move(rel); err != nil {
				return h.res, err
			}
		}
	}
	return h.res, nil
}

type hider struct {
	top, dir string
	since    time.Time
	list     *os.File
	n        int
	res      Result
}

// visit reports whether rel (a path under top, not followed if a link)
// is new whole: a file or link changed since, or a folder changed since
// all of whose content is new. In a folder that is not, it moves the new
// entries itself. A path that is gone is not new.
func (h *hider) visit(rel string) (bool, error) {
	full := filepath.Join(h.top, filepath.FromSlash(rel))
	st, err := os.Lstat(full)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look at %s: %w", rel, err)
	}
	fresh := !ChangeTime(st).Before(h.since)
	if !st.IsDir() {
		h.res.Files++
		return fresh, nil
	}
	entries, err := os.ReadDir(full)
	if err != nil {
		return false, fmt.Errorf("look into %s: %w", rel, err)
	}
	var newKids []string
	for _, e := range entries {
		kid := rel + "/" + e.Name()
		kidNew, err := h.visit(kid)
		if err != nil {
			return false, err
		}
		if kidNew {
			newKids = append(newKids, kid)
		} else {
			fresh = false
		}
	}
	if fresh {
		return true, nil
	}
	for _, kid := range newKids {
		if err := h.move(kid); err != nil {
			return false, err
		}
	}
	return false, nil
}

// move moves rel into the hiding folder, listed first. A move the file
// systems refuse leaves it stuck.
func (h *hider) move(rel string) error {
	h.n++
	name := strconv.Itoa(h.n)
	if _, err := fmt.Fprintf(h.list, "%s\t%s\n", name, rel); err != nil {
		return fmt.Errorf("hide %s: %w", rel, err)
	}
	err := os.Rename(filepath.Join(h.top, filepath.FromSlash(rel)), filepath.Join(h.dir, name))
	switch {
	case err == nil:
		h.res.Moved = append(h.res.Moved, rel)
	case errors.Is(err, syscall.EXDEV):
		h.res.Stuck = append(h.res.Stuck, rel)
	default:
		return fmt.Errorf("hide %s from the guards: %w", rel, err)
	}
	return nil
}

// Restore puts back what a Hide moved into dir, each entry at its path
// inside top (no link followed on the way: a folder the guards replaced
// with a link is not entered), and removes dir. An entry whose path the
// guards filled meanwhile is dropped (theirs stays) and named in
// dropped. No dir: nothing to do.
func Restore(top, dir string) (dropped []string, err error) {
	f, err := fsutil.Open(filepath.Join(dir, manifest))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Lstat(dir); serr == nil {
			return nil, fsutil.RemoveAll(dir)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("put back what was hidden from the guards: %w", err)
	}
	defer f.Close()
	root, err := os.OpenRoot(top)
	if err != nil {
		return nil, fmt.Errorf("put back what was hidden from the guards: %w", err)
	}
	defer root.Close()
	in := bufio.NewScanner(f)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	for in.Scan() {
		name, rel, ok := strings.Cut(in.Text(), "\t")
		if !ok || strings.ContainsAny(name, "/.") {
			continue
		}
		src := filepath.Join(dir, name)
		if _, err := os.Lstat(src); err != nil {
			continue // listed, never moved
		}
		back, err := putBack(root, src, rel)
		if err != nil {
			return dropped, err
		}
		if !back {
			dropped = append(dropped, rel)
			if err := fsutil.RemoveAll(src); err != nil {
				return dropped, err
			}
		}
	}
	if err := in.Err(); err != nil {
		return dropped, fmt.Errorf("read %s: %w", filepath.Join(dir, manifest), err)
	}
	f.Close()
	return dropped, fsutil.RemoveAll(dir)
}

// putBack renames src to rel inside root, making the folders on the way;
// false when rel is taken, or a folder on the way is not one.
func putBack(root *os.Root, src, rel string) (bool, error) {
	rel = filepath.FromSlash(rel)
	if _, err := root.Lstat(rel); !errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	parent := filepath.Dir(rel)
	if parent != "." {
		if err := root.MkdirAll(parent, 0o755); err != nil {
			return false, nil // a link or a file in the way: not followed
		}
	}
	d, err := root.Open(parent)
	if err != nil {
		return false, nil
	}
	defer d.Close()
	if st, err := d.Stat(); err != nil || !st.IsDir() {
		return false, nil
	}
	err = renameInto(src, int(d.Fd()), filepath.Base(rel))
	if errors.Is(err, unix.EEXIST) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("put %s back: %w", rel, err)
	}
	return true, nil
}
