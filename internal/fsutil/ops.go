//go:build unix

package fsutil

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Operations on names: under a confined directory each acts on the last
// name relative to its parent's descriptor and follows no symbolic link.

// Remove removes the file (or empty folder) path names. A symbolic link
// is removed itself, never what it points to.
func Remove(path string) error {
	l, err := locate(path, false)
	if err != nil {
		return err
	}
	defer l.release()
	err = unix.Unlinkat(l.dir, l.name, 0)
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) {
		if rerr := unix.Unlinkat(l.dir, l.name, unix.AT_REMOVEDIR); rerr == nil || !errors.Is(rerr, unix.ENOTDIR) {
			err = rerr
		}
	}
	if err != nil {
		return &fs.PathError{Op: "remove", Path: path, Err: err}
	}
	return nil
}

// RemoveAll removes path and, when it is a folder, everything in it; a
// missing path is not an error. A symbolic link, at path or anywhere
// inside, is removed itself: nothing outside path is ever touched.
func RemoveAll(path string) error {
	if !Confined(path) {
		return os.RemoveAll(path)
	}
	l, err := locate(path, false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	defer l.release()
	if err := removeAllAt(l.dir, l.name); err != nil {
		return &fs.PathError{Op: "remove", Path: path, Err: err}
	}
	return nil
}

// removeAllAt removes name in dirfd and everything below it, opening each
// folder with O_NOFOLLOW relative to its parent.
func removeAllAt(dirfd int, name string) error {
	for try := 0; ; try++ {
		err := unix.Unlinkat(dirfd, name, 0)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
			return err
		}
		fd, err := openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			continue // replaced by a link or a file meanwhile: unlink that
		}
		if err != nil {
			return err
		}
		d := os.NewFile(uintptr(fd), name)
		names, err := d.Readdirnames(-1)
		if err == nil {
			for _, n := range names {
				if err = removeAllAt(fd, n); err != nil {
					break
				}
			}
		}
		d.Close()
		if err != nil {
			return err
		}
		err = unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) || try >= 10 {
			return err
		}
		// Something was created in it meanwhile: empty it again.
	}
}

// Mkdir creates the folder path (its parent must exist). An existing
// name gives an error that is fs.ErrExist.
func Mkdir(path string, perm os.FileMode) error {
	l, err := locate(path, false)
	if err != nil {
		return err
	}
	defer l.release()
	if err := unix.Mkdirat(l.dir, l.name, uint32(perm.Perm())); err != nil {
		return &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	return nil
}

// MkdirAll creates the folder path and its missing parents. Under a
// confined directory an existing component must be a folder, not a
// symbolic link to one.
func MkdirAll(path string, perm os.FileMode) error {
	r, rel := lookup(path)
	if r == nil {
		return os.MkdirAll(path, perm)
	}
	if rel == "." {
		return os.MkdirAll(path, perm) // the confined folder itself, made again after a removal
	}
	return mkdirAll(r.dir+"/"+rel, perm)
}

// mkdirAll is MkdirAll for an absolute, clean path below a confined
// directory.
func mkdirAll(path string, perm os.FileMode) error {
	l, err := locate(path, false)
	if errors.Is(err, fs.ErrNotExist) {
		parent := path[:strings.LastIndexByte(path, '/')]
		if err := mkdirAll(parent, perm); err != nil {
			return err
		}
		l, err = locate(path, false)
	}
	if err != nil {
		return err
	}
	defer l.release()
	// As os.MkdirAll: an existing folder costs one stat and no mkdir.
	if done, err := isDirAt(&l); done || err != nil {
		return err
	}
	err = unix.Mkdirat(l.dir, l.name, uint32(perm.Perm()))
	if errors.Is(err, unix.EEXIST) {
		if done, err := isDirAt(&l); done || err != nil {
			return err
		}
	}
	if err != nil {
		return &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	return nil
}

// isDirAt reports whether l's name is a folder, without following a link;
// a link or anything else there is an error, a missing name neither.
func isDirAt(l *loc) (bool, error) {
	var st unix.Stat_t
	err := unix.Fstatat(l.dir, l.name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		return false, nil
	case err != nil:
		return false, &fs.PathError{Op: "stat", Path: l.path, Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return true, nil
	case unix.S_IFLNK:
		if l.confined {
			return false, &LinkError{Op: "create", Path: l.path, Link: l.path}
		}
		return false, nil // a link outside any confined folder: mkdir says what it is
	}
	return false, &fs.PathError{Op: "mkdir", Path: l.path, Err: unix.ENOTDIR}
}

// Rename renames oldpath to newpath. Under a confined directory both must
// be in the same one; a symbolic link at newpath is replaced, never
// followed.
func Rename(oldpath, newpath string) error {
	ro, _ := lookup(oldpath)
	rn, _ := lookup(newpath)
	if ro == nil && rn == nil {
		return os.Rename(oldpath, newpath)
	}
	if ro != rn {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: unix.EXDEV}
	}
	lo, err := locate(oldpath, false)
	if err != nil {
		return err
	}
	defer lo.release()
	ln, err := locate(newpath, false)
	if err != nil {
		return err
	}
	defer ln.release()
	if err := unix.Renameat(lo.dir, lo.name, ln.dir, ln.name); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

// ReadDir lists the folder path, sorted by name, like os.ReadDir, without
// following a symbolic link under a confined directory.
func ReadDir(path string) ([]os.DirEntry, error) {
	if !Confined(path) {
		return os.ReadDir(path)
	}
	fd, err := openDir(path)
	if err != nil {
		return nil, err
	}
	d := os.NewFile(uintptr(fd), path)
	defer d.Close()
	entries, err := d.ReadDir(-1)
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// Truncate cuts the file path to size bytes. The file is the runner's own
// first, as OpenAppend makes it: a file with other links is replaced by a
// copy of its own, and they keep their content.
func Truncate(path string, size int64) error {
	f, err := openPrivate(path, 0, true, false)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
