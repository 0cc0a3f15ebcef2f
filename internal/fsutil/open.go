//go:build unix

package fsutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Opening files: every file the runner reads is a regular file, opened
// without blocking on a named pipe; every file it writes is its own, a
// regular file with a single link. Under a confined directory no symbolic
// link is followed (see Confine).

// Open opens path for reading. Only a regular file is opened: a named
// pipe, a device, a socket or a folder is refused at once, without
// waiting for a writer (a *NotRegularError), and under a confined
// directory so is a symbolic link (a *LinkError).
func Open(path string) (*os.File, error) {
	f, _, err := openRead(path)
	return f, err
}

// ReadFile reads the whole of path, opened as Open does.
func ReadFile(path string) ([]byte, error) {
	f, size, err := openRead(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readInto(make([]byte, 0, size+1), f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", DisplayPath(path), err)
	}
	return data, nil
}

// readInto appends all of r to data, growing it only when it is full:
// given room for the whole file, one allocation reads it.
func readInto(data []byte, r io.Reader) ([]byte, error) {
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if errors.Is(err, io.EOF) {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// openRead is Open, also returning the file's size when it was opened.
func openRead(path string) (*os.File, int64, error) {
	l, err := locate(path, false)
	if err != nil {
		return nil, 0, err
	}
	defer l.release()
	fd, err := openat(l.dir, l.name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|l.nofollow(), 0)
	if errors.Is(err, unix.ENXIO) {
		return nil, 0, &NotRegularError{Path: path, Mode: fs.ModeSocket}
	}
	if err != nil {
		return nil, 0, finalError(&l, "open", err)
	}
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, 0, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, 0, &NotRegularError{Path: path, Mode: fileMode(uint32(st.Mode))}
	}
	f, err := newFile(fd, 0, path)
	return f, st.Size, err
}

// OpenAppend opens path for appending (reading and writing, O_APPEND),
// creating it when missing. The file written is always the runner's own:
// when the name is a regular file with more than one link (a hard link to
// a file elsewhere), it is first replaced by a private copy of that
// file's content, so that the other file never changes; when it is a
// named pipe, a socket or a device, or under a confined directory a
// symbolic link, it is replaced by a new empty file (nothing is read
// through it).
func OpenAppend(path string) (*os.File, error) {
	return openPrivate(path, unix.O_APPEND, true, true)
}

// OpenWrite opens path for writing in place (reading and writing, from
// offset 0, nothing truncated), creating it when missing. Like
// OpenAppend, a name that is not the runner's own regular file is
// replaced first, by a new empty file: the caller writes the content.
func OpenWrite(path string) (*os.File, error) {
	return openPrivate(path, 0, false, true)
}

// Create replaces whatever path names with a new empty file and opens it
// for reading and writing: the old name is removed, never truncated or
// written through, and the file is created with O_EXCL.
func Create(path string) (*os.File, error) {
	l, err := locate(path, false)
	if err != nil {
		return nil, err
	}
	defer l.release()
	for try := 0; ; try++ {
		if err := unix.Unlinkat(l.dir, l.name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return nil, &fs.PathError{Op: "remove", Path: path, Err: err}
		}
		fd, err := openat(l.dir, l.name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if errors.Is(err, unix.EEXIST) && try < 100 {
			continue // created again meanwhile
		}
		if err != nil {
			return nil, finalError(&l, "create", err)
		}
		return newFile(fd, 0, path)
	}
}

func openPrivate(path string, appendFlag int, keep, create bool) (*os.File, error) {
	l, err := locate(path, false)
	if err != nil {
		return nil, err
	}
	defer l.release()
	return l.openPrivate(appendFlag, keep, create)
}

// openPrivate opens l's file for reading and writing (with appendFlag),
// creating it when create is set, and makes sure it is a regular file
// with a single link, replacing the name as OpenAppend says; keep copies
// the content of a shared regular file into the replacement.
func (l *loc) openPrivate(appendFlag int, keep, create bool) (*os.File, error) {
	flags := unix.O_RDWR | unix.O_NONBLOCK | unix.O_CLOEXEC | appendFlag | l.nofollow()
	if create {
		flags |= unix.O_CREAT
	}
	fd, err := openat(l.dir, l.name, flags, 0o644)
	if err != nil {
		// ELOOP: a symbolic link (O_NOFOLLOW); ENXIO: a socket, or a
		// named pipe nobody reads.
		if create && ((l.confined && errors.Is(err, unix.ELOOP)) || errors.Is(err, unix.ENXIO)) {
			return l.replacePrivate(-1, appendFlag)
		}
		return nil, finalError(l, "open", err)
	}
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: l.path, Err: err}
	}
	regular := st.Mode&unix.S_IFMT == unix.S_IFREG
	if regular && st.Nlink == 1 {
		return newFile(fd, appendFlag, l.path)
	}
	if regular && keep {
		return l.replacePrivate(fd, appendFlag)
	}
	unix.Close(fd)
	if !create {
		return nil, &NotRegularError{Path: l.path, Mode: fileMode(uint32(st.Mode))}
	}
	return l.replacePrivate(-1, appendFlag)
}

// replacePrivate gives l's name a new file of its own: a copy of src (an
// open regular file, which it closes) or, when src is -1, an empty file.
// The replacement is durable before it is returned, opened with
// appendFlag.
func (l *loc) replacePrivate(src, appendFlag int) (*os.File, error) {
	tmp, name, err := l.createTemp()
	if err != nil {
		if src >= 0 {
			unix.Close(src)
		}
		return nil, err
	}
	if appendFlag != 0 {
		if _, err := unix.FcntlInt(uintptr(tmp), unix.F_SETFL, appendFlag); err != nil {
			unix.Close(tmp)
			unix.Unlinkat(l.dir, name, 0)
			if src >= 0 {
				unix.Close(src)
			}
			return nil, &fs.PathError{Op: "fcntl", Path: l.path, Err: err}
		}
	}
	f := os.NewFile(uintptr(tmp), l.path)
	ok := false
	defer func() {
		if !ok {
			f.Close()
			unix.Unlinkat(l.dir, name, 0)
		}
	}()
	if src >= 0 {
		in := os.NewFile(uintptr(src), l.path)
		_, err := io.Copy(f, in)
		in.Close()
		if err != nil {
			return nil, fmt.Errorf("copy %s to a file of its own: %w", DisplayPath(l.path), err)
		}
	}
	if err := f.Chmod(0o644); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("copy %s to a file of its own: fsync: %w", DisplayPath(l.path), err)
	}
	if err := unix.Renameat(l.dir, name, l.dir, l.name); err != nil {
		return nil, finalError(l, "replace", err)
	}
	ok = true
	if err := l.syncDir(); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// createTemp creates a new temporary file next to l's file (O_EXCL,
// O_NOFOLLOW, mode 0600) and returns it and its name relative to l.dir.
func (l *loc) createTemp() (int, string, error) {
	base := filepath.Base(l.name)
	for try := 0; ; try++ {
		name := l.sibling(TempPrefix + base + "-" + strconv.FormatUint(uint64(rand.Uint32()), 10))
		fd, err := openat(l.dir, name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) && try < 10000 {
			continue
		}
		if err != nil {
			return -1, "", &fs.PathError{Op: "create a temporary file for", Path: l.path, Err: err}
		}
		return fd, name, nil
	}
}

// syncDir fsyncs the directory holding l's file.
func (l *loc) syncDir() error {
	if !l.confined {
		return SyncDir(filepath.Dir(l.name))
	}
	fd, err := openat(l.dir, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sync the folder of %s: %w", DisplayPath(l.path), err)
	}
	defer unix.Close(fd)
	return fsyncDir(fd, filepath.Dir(l.path))
}

// fsyncDir fsyncs an open directory; file systems that cannot are fine.
func fsyncDir(fd int, dir string) error {
	if err := fsync(fd); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOTSUP) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// newFile wraps fd, opened with O_NONBLOCK so that a named pipe could not
// block the open, as a plain blocking file with appendFlag.
func newFile(fd, appendFlag int, path string) (*os.File, error) {
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFL, appendFlag); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "fcntl", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func openat(dir int, name string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, flags, perm)
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

func fstat(fd int, st *unix.Stat_t) error {
	for {
		err := unix.Fstat(fd, st)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

func fsync(fd int) error {
	for {
		err := unix.Fsync(fd)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// fileMode converts the type bits of a stat mode.
func fileMode(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	}
	return 0
}
