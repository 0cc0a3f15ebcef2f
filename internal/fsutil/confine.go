//go:build unix

package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// The confinement layer. The runner runs outside any sandbox, while the
// agent it drives shares the files under .runner/: a symbolic link the
// agent puts there would make a write meant for .runner/ land anywhere.
// Confine registers such a directory and holds it open; from then on every
// function of this package given a path inside it resolves that path
// relative to the held directory without following a symbolic link in any
// component (openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS on Linux,
// one openat with O_NOFOLLOW per component elsewhere), and acts on the
// last name relative to its parent's descriptor (openat with O_NOFOLLOW,
// renameat, unlinkat, mkdirat). Paths outside every confined directory are
// handled as plain paths.

// ErrSymlink is what a path under a confined directory that goes through
// a symbolic link is refused with (errors.Is).
var ErrSymlink = errors.New("symbolic link refused")

// ErrNotRegular is what a named pipe, a device, a socket or a folder found
// where a file is to be read is refused with (errors.Is).
var ErrNotRegular = errors.New("not a regular file")

// LinkError is a refusal to go through a symbolic link under a confined
// directory: Link is the link, Path what was being read or written, Op
// what was being done ("" for Confine itself). The message names the
// link; callers say what they were doing with which file.
type LinkError struct {
	Op, Path, Link string
}

func (e *LinkError) Error() string {
	const why = "is a symbolic link, and the runner does not follow symbolic links under .runner/"
	switch {
	case e.Op == "":
		return fmt.Sprintf("%s %s; move the real folder there instead", DisplayPath(e.Link), why)
	case e.Link == e.Path:
		return fmt.Sprintf("%s %s; put the real file there instead", DisplayPath(e.Link), why)
	}
	return fmt.Sprintf("%s %s; put the real folder there instead", DisplayPath(e.Link), why)
}

func (e *LinkError) Unwrap() error { return ErrSymlink }

// NotRegularError is a refusal of a file that is not a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: is %s, not a regular file; replace it with the file itself", DisplayPath(e.Path), kindOf(e.Mode))
}

func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a folder"
	}
	return "a special file"
}

// root is a confined directory, held open.
type root struct {
	dir  string // absolute and clean
	fd   int
	refs int // Confine calls not yet released (under rootsMu)
	// users counts the operations using fd, plus one while the root is
	// registered; whoever brings it to zero closes fd, so Release never
	// closes it under an operation.
	users atomic.Int64
}

// acquire reports whether fd can be used, counting one more user.
func (r *root) acquire() bool {
	for {
		n := r.users.Load()
		if n == 0 {
			return false // released meanwhile
		}
		if r.users.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (r *root) done() {
	if r.users.Add(-1) == 0 {
		unix.Close(r.fd)
	}
}

var (
	rootsMu sync.Mutex              // serializes Confine and Release
	roots   atomic.Pointer[[]*root] // read without a lock by every operation
)

// Confine registers dir (a repository's .runner/) as a confined directory
// until as many Release calls as Confine calls were made for it; for a
// command that is the life of the process. dir must be a real directory,
// not a symbolic link: a link is refused with an error saying so. Confining
// a directory again only counts one more user.
func Confine(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	rootsMu.Lock()
	defer rootsMu.Unlock()
	cur := roots.Load()
	if cur != nil {
		for _, r := range *cur {
			if r.dir == abs {
				r.refs++
				return nil
			}
		}
	}
	fd, err := openRoot(abs)
	if err != nil {
		return err
	}
	var next []*root
	if cur != nil {
		next = append(next, *cur...)
	}
	r := &root{dir: abs, fd: fd, refs: 1}
	r.users.Store(1)
	next = append(next, r)
	roots.Store(&next)
	return nil
}

// openRoot opens the directory to confine, refusing a symbolic link.
func openRoot(abs string) (int, error) {
	st, err := os.Lstat(abs)
	if err != nil {
		return -1, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return -1, &LinkError{Path: abs, Link: abs}
	}
	if !st.IsDir() {
		return -1, fmt.Errorf("%s is not a folder", DisplayPath(abs))
	}
	fd, err := unix.Open(abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return -1, &LinkError{Path: abs, Link: abs} // replaced meanwhile
	}
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: abs, Err: err}
	}
	return fd, nil
}

// Release undoes one Confine of dir; the last one closes it, and paths
// inside it are plain paths again.
func Release(dir string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	rootsMu.Lock()
	defer rootsMu.Unlock()
	cur := roots.Load()
	if cur == nil {
		return
	}
	for i, r := range *cur {
		if r.dir != abs {
			continue
		}
		if r.refs--; r.refs > 0 {
			return
		}
		next := append(append([]*root(nil), (*cur)[:i]...), (*cur)[i+1:]...)
		roots.Store(&next)
		r.done()
		return
	}
}

// Confined reports whether path lies in a confined directory.
func Confined(path string) bool {
	r, _ := lookup(path)
	return r != nil
}

// ConfinedRoot returns the confined directory holding path, so that
// another process writing there (the runner's supervisor) can confine
// it too; ok is false when path is in none.
func ConfinedRoot(path string) (dir string, ok bool) {
	r, _ := lookup(path)
	if r == nil {
		return "", false
	}
	return r.dir, true
}

// lookup finds the confined directory holding path and path's name
// relative to it ("." for the directory itself).
func lookup(path string) (*root, string) {
	cur := roots.Load()
	if cur == nil || len(*cur) == 0 {
		return nil, ""
	}
	abs := filepath.Clean(path)
	if !filepath.IsAbs(abs) {
		var err error
		if abs, err = filepath.Abs(abs); err != nil {
			return nil, ""
		}
	}
	for _, r := range *cur {
		if abs == r.dir {
			return r, "."
		}
		if len(abs) > len(r.dir) && abs[len(r.dir)] == '/' && strings.HasPrefix(abs, r.dir) {
			return r, abs[len(r.dir)+1:]
		}
	}
	return nil, ""
}

// use returns the confined directory holding path, acquired (the caller
// calls done), and path's name relative to it; nil for a path outside
// every confined directory.
func use(path string) (*root, string) {
	r, rel := lookup(path)
	if r == nil || !r.acquire() {
		return nil, ""
	}
	if removed(r) {
		if nr := reopen(r); nr != r && nr.acquire() {
			r.done()
			r = nr
		}
	}
	return r, rel
}

// removed reports whether r's directory was removed: its link count is 0.
func removed(r *root) bool {
	var st unix.Stat_t
	return fstat(r.fd, &st) == nil && st.Nlink == 0
}

// reopen replaces r, whose directory was removed, with the directory made
// again at the same path (the agent's `git clean -fdx` took .runner/ and
// the runner put it back), opened as Confine opens it, so that the files
// written from then on are in the folder people see. It returns the
// directory now registered for r's path: r itself when there is nothing to
// open there (or a symbolic link, which is refused).
func reopen(r *root) *root {
	rootsMu.Lock()
	defer rootsMu.Unlock()
	cur := roots.Load()
	if cur == nil {
		return r
	}
	for i, x := range *cur {
		if x.dir != r.dir {
			continue
		}
		if x != r {
			return x // reopened already
		}
		fd, err := openRoot(r.dir)
		if err != nil {
			return r
		}
		nr := &root{dir: r.dir, fd: fd, refs: r.refs}
		nr.users.Store(1)
		next := append([]*root(nil), (*cur)...)
		next[i] = nr
		roots.Store(&next)
		r.done() // the registry's reference: closed once its users are done
		return nr
	}
	return r
}

// loc is where a file lies: a directory descriptor and the file's name
// relative to it. Outside every confined directory dir is AT_FDCWD and
// name the path itself.
type loc struct {
	dir      int
	name     string
	path     string // as given, for messages
	confined bool
	owned    bool  // dir is closed by release
	r        *root // acquired until release
}

func (l *loc) release() {
	if l.owned {
		unix.Close(l.dir)
		l.owned = false
	}
	if l.r != nil {
		l.r.done()
		l.r = nil
	}
}

// nofollow is O_NOFOLLOW under a confined directory, 0 elsewhere.
func (l *loc) nofollow() int {
	if l.confined {
		return unix.O_NOFOLLOW
	}
	return 0
}

// sibling is the name of another file in the same directory.
func (l *loc) sibling(base string) string {
	if l.confined {
		return base
	}
	return filepath.Join(filepath.Dir(l.name), base)
}

// locate resolves the directory holding path. With readable the
// directory descriptor can be fsynced and listed (on Linux it is
// otherwise an O_PATH descriptor). The caller must call release.
func locate(path string, readable bool) (loc, error) {
	r, rel := use(path)
	if r == nil {
		return loc{dir: unix.AT_FDCWD, name: path, path: path}, nil
	}
	if rel == "." {
		r.done()
		return loc{}, fmt.Errorf("%s: is the confined folder itself, not a file in it", DisplayPath(path))
	}
	l := loc{dir: r.fd, path: path, confined: true, r: r}
	parent, base := splitRel(rel)
	l.name = base
	if parent != "." {
		fd, err := openBeneath(r.fd, parent, readable)
		if err != nil {
			l.release()
			return loc{}, resolveError(r, parent, path, err)
		}
		l.dir, l.owned = fd, true
	}
	return l, nil
}

// openDir opens the directory at path (read-only, so that it can be
// listed and fsynced), without following links under a confined
// directory. The caller closes the descriptor; the confined directory
// itself is returned as a new descriptor too.
func openDir(path string) (int, error) {
	if r, rel := use(path); r != nil {
		defer r.done()
		if rel == "." {
			return unix.FcntlInt(uintptr(r.fd), unix.F_DUPFD_CLOEXEC, 0)
		}
		fd, err := openBeneath(r.fd, rel, true)
		if err != nil {
			return -1, resolveError(r, rel, path, err)
		}
		return fd, nil
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, nil
}

func splitRel(rel string) (parent, base string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return ".", rel
	}
	return rel[:i], rel[i+1:]
}

// walkBeneath opens the directory rel below dirfd one component at a
// time, each with O_NOFOLLOW|O_DIRECTORY: a symbolic link anywhere fails.
func walkBeneath(dirfd int, rel string) (int, error) {
	cur, owned := dirfd, false
	for comp := range strings.SplitSeq(rel, "/") {
		if comp == ".." {
			if owned {
				unix.Close(cur)
			}
			return -1, unix.EXDEV
		}
		if comp == "" || comp == "." {
			continue
		}
		fd, err := unix.Openat(cur, comp, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if owned {
			unix.Close(cur)
		}
		if err != nil {
			return -1, err
		}
		cur, owned = fd, true
	}
	if !owned {
		return unix.FcntlInt(uintptr(dirfd), unix.F_DUPFD_CLOEXEC, 0)
	}
	return cur, nil
}

// resolveError explains why rel (a directory below r) could not be
// opened: a symbolic link on the way is named.
func resolveError(r *root, rel, path string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EXDEV) {
		if link := firstLink(r.dir, rel); link != "" {
			return &LinkError{Op: "open", Path: path, Link: link}
		}
	}
	return &fs.PathError{Op: "open", Path: filepath.Join(r.dir, rel), Err: err}
}

// firstLink returns the first component of dir/rel that is a symbolic
// link, or "". It is for messages only.
func firstLink(dir, rel string) string {
	p := dir
	for comp := range strings.SplitSeq(rel, "/") {
		p = filepath.Join(p, comp)
		st, err := os.Lstat(p)
		if err != nil {
			return ""
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return p
		}
	}
	return ""
}

// finalError turns the error of an *at call on l's name into one that
// names the file: a symbolic link refused under a confined directory
// becomes a LinkError.
func finalError(l *loc, op string, err error) error {
	if l.confined && errors.Is(err, unix.ELOOP) {
		return &LinkError{Op: op, Path: l.path, Link: l.path}
	}
	return &fs.PathError{Op: op, Path: l.path, Err: err}
}
