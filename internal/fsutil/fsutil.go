// Package fsutil holds the small file-system primitives every state file
// relies on: durable atomic replacement, bounded reads, and cleanup of
// temporary files left behind by a crash; and the confinement of the
// files an untrusted agent shares with the runner (see Confine): under a
// confined directory no symbolic link is followed and no file with other
// links is written through, and everywhere the files read are regular
// files, never a named pipe that would block the runner.
//
// For crash tests only, the RUNNER_FAILPOINT environment variable makes
// the process kill itself inside one of these writes (see FailpointEnv).
package fsutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// TempPrefix starts the name of every temporary file WriteFileAtomic
// creates, so RemoveTemps can find the ones a crash left behind.
const TempPrefix = ".tmp-"

// WriteFileAtomic replaces path with data so that a crash at any instant
// leaves either the old or the new content, never a torn file: it writes a
// temporary file in the same directory, fsyncs it, renames it over path and
// fsyncs the directory. It is ReplaceFile with Durable.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return ReplaceFile(path, data, perm, Durable)
}

// Durability says how much of a write survives a crash of the machine (a
// power loss, a kernel panic). Every level survives a crash of the process
// itself: what a process wrote is in the kernel's cache, which the next
// process reads.
type Durability int

const (
	// Durable: when the write returns, the new content is on disk under
	// its name (the file and its directory are fsynced).
	Durable Durability = iota
	// FileSynced: the new content is on disk before it takes the name, but
	// the directory is not fsynced, so after a machine crash the file may
	// still hold the previous content (or, for a new name, be absent).
	// A later SyncDir of the same directory makes it Durable.
	FileSynced
	// NotSynced: nothing is fsynced. A machine crash may leave the file
	// with its previous content, absent, or empty; the kernel writes it to
	// disk within its writeback delay (about 30 seconds on Linux).
	NotSynced
)

// ReplaceFile replaces path with data through a temporary file in the same
// directory renamed over path, so that no reader and no crash of the
// process ever sees a torn file, and makes the result as durable as d
// says.
func ReplaceFile(path string, data []byte, perm os.FileMode, d Durability) error {
	rep, err := prepareReplace(path, data, perm, d != NotSynced, true)
	if err != nil {
		return err
	}
	return rep.Commit(d)
}

// ReplaceCopy is ReplaceFile with NotSynced for a second copy of a file
// the runner holds elsewhere (its keep in the git directory), written in
// the background while the runner's own writes go on. The crash-testing
// hook (FailpointEnv) does not count it: a write point then names the
// same write of the runner's own files on every run, whichever of the
// two goroutines comes first.
func ReplaceCopy(path string, data []byte, perm os.FileMode) error {
	rep, err := prepareReplace(path, data, perm, false, false)
	if err != nil {
		return err
	}
	return rep.Commit(NotSynced)
}

// Replacement is a replacement of a file prepared by PrepareReplace: the
// new content is in a temporary file, on disk, not yet under the name.
type Replacement struct {
	path, tmp string
	hooked    bool // the crash-testing hook counts its rename
}

// PrepareReplace does the first half of a durable ReplaceFile: it writes
// data to a temporary file next to path and fsyncs it. Commit then gives
// it the name; Abort removes it. Splitting the two lets the slow part run
// while something that must be durable before the new content takes the
// name is being written.
func PrepareReplace(path string, data []byte, perm os.FileMode) (*Replacement, error) {
	return prepareReplace(path, data, perm, true, true)
}

func prepareReplace(path string, data []byte, perm os.FileMode, sync, hooked bool) (*Replacement, error) {
	l, err := locate(path, false)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	defer l.release()
	fd, name, err := l.createTemp()
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	tmp := filepath.Join(filepath.Dir(path), filepath.Base(name))
	f := os.NewFile(uintptr(fd), tmp)
	ok := false
	defer func() {
		if !ok {
			f.Close()
			unix.Unlinkat(l.dir, name, 0)
		}
	}()
	if hooked && failHere(FailTemp, path) {
		f.Write(data[:len(data)/2])
		die()
	}
	if _, err := f.Write(data); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			return nil, fmt.Errorf("write %s: fsync: %w", path, err)
		}
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	ok = true
	return &Replacement{path: path, tmp: tmp, hooked: hooked}, nil
}

// Commit renames the prepared file over its path and, with Durable,
// fsyncs the directory. The content was fsynced by PrepareReplace
// (ReplaceFile with NotSynced prepares without it). A symbolic link at
// path is replaced, never followed.
func (r *Replacement) Commit(d Durability) error {
	l, err := locate(r.path, d == Durable)
	if err != nil {
		Remove(r.tmp)
		return fmt.Errorf("write %s: %w", r.path, err)
	}
	defer l.release()
	tmp := l.sibling(filepath.Base(r.tmp))
	if err := unix.Renameat(l.dir, tmp, l.dir, l.name); err != nil {
		unix.Unlinkat(l.dir, tmp, 0)
		return fmt.Errorf("write %s: %w", r.path, &os.LinkError{Op: "rename", Old: r.tmp, New: r.path, Err: err})
	}
	if r.hooked && failHere(FailRename, r.path) {
		die()
	}
	if d != Durable {
		return nil
	}
	if !l.confined {
		return SyncDir(filepath.Dir(r.path))
	}
	return fsyncDir(l.dir, filepath.Dir(r.path))
}

// Abort removes the prepared file.
func (r *Replacement) Abort() {
	Remove(r.tmp)
}

// SyncDir fsyncs a directory so that a rename or file creation inside it
// survives a power loss.
func SyncDir(dir string) error {
	fd, err := openDir(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer unix.Close(fd)
	return fsyncDir(fd, dir)
}

// SyncFile fsyncs an existing file, making earlier writes to it durable
// (an append made without an fsync, say). A missing file is not an error.
func SyncFile(path string) error {
	f, err := Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}

// RemoveTemps deletes the temporary files WriteFileAtomic left in dir when
// the process died between creating and renaming them. It returns the
// names it removed. A dir under a confined directory that is a symbolic
// link holds nothing of the runner's: nothing is removed.
func RemoveTemps(dir string) ([]string, error) {
	entries, err := ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, ErrSymlink) {
			return nil, nil
		}
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasPrefix(e.Name(), TempPrefix) {
			continue
		}
		if err := Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			return removed, err
		}
		removed = append(removed, e.Name())
	}
	return removed, nil
}

// ErrTooLarge is returned by ReadLimited when a file exceeds its limit.
var ErrTooLarge = errors.New("file too large")

// ReadLimited reads at most limit bytes of path. A file larger than limit
// is refused without reading the rest of it. When text is true the content
// must also be valid UTF-8. Errors name the file and the reason. The file
// is opened as Open opens it: a named pipe, a device or a socket is
// refused at once, and under a confined directory a symbolic link.
func ReadLimited(path string, limit int64, text bool) ([]byte, error) {
	return ReadLimitedInto(nil, path, limit, text)
}

// ReadLimitedInto is ReadLimited reading into buf's storage when it is
// large enough (the result then shares it), so that a caller reading the
// same file again and again can reuse one buffer: pass the last result.
// When buf is not nil and too small, the new buffer leaves room for the
// file to grow by an eighth.
func ReadLimitedInto(buf []byte, path string, limit int64, text bool) ([]byte, error) {
	f, size, err := openRead(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The buffer is sized from the file's size, so a large file is read
	// into one allocation of its size instead of a buffer grown by
	// doubling; a file that grows meanwhile still ends at limit+1 bytes.
	size = min(size, limit) + 1
	data := buf[:0]
	if int64(cap(data)) < size {
		if buf != nil {
			// A reused buffer gets room for the file to grow a little.
			size += size / 8
		}
		data = make([]byte, 0, size)
	}
	data, err = readInto(data, io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", DisplayPath(path), err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("read %s: %w: more than %d bytes; shrink it or raise the limit", DisplayPath(path), ErrTooLarge, limit)
	}
	if text && !utf8.Valid(data) {
		off := firstInvalidUTF8(data)
		line, col := LineCol(data, off)
		return nil, fmt.Errorf("read %s: line %d, column %d: invalid UTF-8; save the file as UTF-8", DisplayPath(path), line, col)
	}
	return data, nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// LineCol converts a byte offset in data to a 1-based line and column
// (the column counts runes).
func LineCol(data []byte, offset int) (line, col int) {
	if offset > len(data) {
		offset = len(data)
	}
	if offset < 0 {
		offset = 0
	}
	before := data[:offset]
	line = bytes.Count(before, []byte{'\n'}) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	col = utf8.RuneCount(before[start:]) + 1
	return line, col
}

// DisplayPath shortens path for messages: relative to the working
// directory when it lies below it (".runner/tree.json"), else unchanged.
func DisplayPath(path string) string {
	if !filepath.IsAbs(path) {
		return path
	}
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	rel, err := filepath.Rel(wd, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return path
	}
	return rel
}

// ReplaceJSON replaces path with v encoded as indented JSON and a final
// newline (ReplaceFile), as durably as d says: the form of every JSON
// file the runner writes for people and for itself.
func ReplaceJSON(path string, v any, d Durability) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return ReplaceFile(path, append(data, '\n'), 0o644, d)
}

// ReadEnd reads the end of the file at path: at most limit bytes, even
// when the file grows meanwhile, and the offset in the file where they
// start. It opens the file as Open does (no link followed under a
// confined folder, a named pipe refused at once).
func ReadEnd(path string, limit int64) (data []byte, start int64, err error) {
	f, err := Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, 0, err
		}
		return nil, 0, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", path, err)
	}
	start = max(st.Size()-limit, 0)
	data, err = io.ReadAll(io.NewSectionReader(f, start, limit))
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", path, err)
	}
	return data, start, nil
}
