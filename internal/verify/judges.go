package verify

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runner-cli/runner/internal/fsutil"
)

// Judged says what judges an iteration and must not change while its
// agent works.
type Judged struct {
	// Root is the working tree the agent works in; Protect is matched
	// against paths relative to it.
	Root string
	// RunnerDir is the .runner folder of the runner's state, "" when it
	// is out of the agent's tree and not judged (a parallel slot's agent
	// works beside the checkout while other slots write there). Inputs says
	// whether its config.toml and tree.json are judged: in place they are
	// within the agent's reach; beside a linked worktree they are the
	// person's, out of it.
	RunnerDir string
	Inputs    bool
	// SkipState are base names in RunnerDir/state that are not judged:
	// the files the runner itself writes while the agent works, and the
	// requests a person may leave there (stop, pause).
	SkipState []string
	Protect   Globs
	// Files are more files judged, outside Root's protected paths and the
	// runner's folder: the repository's git configuration and a linked
	// worktree's .git file, which an unconfined agent could point the
	// runner's git at. Each is named (and kept) by its Rel.
	Files []File
	// Limit bounds the bytes of the judged files kept in memory; 0:
	// DefaultLimit.
	Limit int64
}

// DefaultLimit bounds the content a Baseline keeps.
const DefaultLimit = 256 << 20

// Changes are "added", "modified" and "deleted".
const (
	Added    = "added"
	Modified = "modified"
	Deleted  = "deleted"
)

// A Change is a judged path the agent changed.
type Change struct {
	Path string // absolute
	// Rel is the path people read: relative to the repository root for
	// the runner's files (".runner/tree.json"), to Root for the others.
	Rel  string
	Kind string
	now  *content // what the agent left (nil when deleted)
}

// content is one file's bytes and mode; a symbolic link keeps its target.
// A regular file larger than what the reader wanted is not read: lazy,
// with its size alone (a 64 GiB sparse file must not be read whole).
type content struct {
	data []byte
	mode fs.FileMode
	size int64
	lazy bool
}

func (c *content) equal(o *content) bool {
	if c.mode.Type() != o.mode.Type() || c.mode.Perm() != o.mode.Perm() || c.size != o.size {
		return false
	}
	if c.lazy || o.lazy {
		return false // not read: the same size, but nothing says the same bytes
	}
	return bytes.Equal(c.data, o.data)
}

// A Baseline is the judged files as they were before the agent started.
type Baseline struct {
	j     Judged
	files map[string]*content // absolute path → content
	rels  map[string]string
	size  int64
}

// Take reads the judged files. A judged file that cannot be read is an
// error: the runner cannot promise to put it back.
func Take(j Judged) (*Baseline, error) {
	if j.Limit == 0 {
		j.Limit = DefaultLimit
	}
	b := &Baseline{j: j, files: map[string]*content{}, rels: map[string]string{}}
	over := func() error {
		return fmt.Errorf("the judged files (the runner's inputs and verify.protect) hold more than %d MiB; narrow verify.protect in .runner/config.toml", j.Limit>>20)
	}
	err := b.scan(func(path string) int64 { return j.Limit - b.size }, func(path, rel string, c *content) error {
		if c == nil {
			return nil
		}
		if c.lazy {
			return over()
		}
		b.size += int64(len(c.data))
		if b.size > j.Limit {
			return over()
		}
		b.files[path], b.rels[path] = c, rel
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Check compares the judged files with the baseline and returns what
// changed, in path order.
func (b *Baseline) Check() ([]Change, error) {
	seen := map[string]bool{}
	var out []Change
	// A file is read only when it could be what the baseline holds: the
	// same size as a regular file there.
	want := func(path string) int64 {
		if old := b.files[path]; old != nil && old.mode.IsRegular() {
			return old.size
		}
		return 0
	}
	err := b.scan(want, func(path, rel string, c *content) error {
		seen[path] = true
		old := b.files[path]
		switch {
		case c == nil && old == nil:
		case c == nil:
			out = append(out, Change{Path: path, Rel: rel, Kind: Deleted})
		case old == nil:
			out = append(out, Change{Path: path, Rel: rel, Kind: Added, now: c})
		case !c.equal(old):
			out = append(out, Change{Path: path, Rel: rel, Kind: Modified, now: c})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for path := range b.files {
		if !seen[path] {
			out = append(out, Change{Path: path, Rel: b.rels[path], Kind: Deleted})
		}
	}
	slices.SortFunc(out, func(x, y Change) int { return strings.Compare(x.Rel, y.Rel) })
	return out, nil
}

// KeepLimit bounds what Keep copies of one changed file: a larger one is
// kept as its first KeepLimit bytes, under its name with ".head" added.
const KeepLimit = 16 << 20

// Keep copies what the agent left at each changed path under dir, at
// the path's Rel, and returns where each went (relative to dir; "" for a
// deletion). A symbolic link is kept as a file holding its target. A file
// larger than KeepLimit keeps its head only (Rel + ".head"), read by
// streaming.
func (b *Baseline) Keep(changes []Change, dir string) ([]string, error) {
	kept := make([]string, len(changes))
	for i, c := range changes {
		if c.now == nil {
			continue
		}
		rel := c.Rel
		if c.now.lazy && c.now.size > KeepLimit {
			rel += ".head"
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := fsutil.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return kept, err
		}
		data := c.now.data
		if c.now.lazy {
			var err error
			if data, err = readHead(c.Path, KeepLimit, KeepLimit); err != nil {
				return kept, err
			}
		}
		if err := fsutil.WriteFileAtomic(dst, data, 0o644); err != nil {
			return kept, err
		}
		kept[i] = filepath.ToSlash(rel)
	}
	return kept, nil
}

// readHead reads at most n bytes from the start of the file at path,
// which is about size bytes long: the buffer is made that large at once
// (io.ReadAll would double it from 512 bytes, a dozen times for a large
// tree.json, every iteration).
func readHead(path string, n, size int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := bytes.NewBuffer(make([]byte, 0, min(size, n)+bytes.MinRead))
	_, err = b.ReadFrom(io.LimitReader(f, n))
	return b.Bytes(), err
}

// Restore puts every changed path back as it was in the baseline: a
// modified or deleted file gets its content and mode again (replacing
// whatever the agent put there, a link included), an added one is
// removed.
func (b *Baseline) Restore(changes []Change) error {
	var errs []error
	for _, c := range changes {
		old := b.files[c.Path]
		if old == nil {
			if err := fsutil.RemoveAll(c.Path); err != nil {
				errs = append(errs, fmt.Errorf("remove %s: %w", c.Rel, err))
			}
			continue
		}
		if err := putBack(c.Path, old); err != nil {
			errs = append(errs, fmt.Errorf("put back %s: %w", c.Rel, err))
		}
	}
	return errors.Join(errs...)
}

func putBack(path string, c *content) error {
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		if err := fsutil.RemoveAll(path); err != nil {
			return err
		}
	}
	if err := fsutil.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if c.mode.Type() == fs.ModeSymlink {
		tmp := path + ".runner-restore"
		fsutil.Remove(tmp)
		if err := os.Symlink(string(c.data), tmp); err != nil {
			return err
		}
		return fsutil.Rename(tmp, path)
	}
	if err := fsutil.WriteFileAtomic(path, c.data, c.mode.Perm()); err != nil {
		return err
	}
	return os.Chmod(path, c.mode.Perm())
}

// File is a judged file named apart from Root: its path and how the
// tamper record names it (".git/config").
type File struct {
	Path, Rel string
}

// scan calls fn for every judged path: the runner's inputs (with nil
// content when absent), the files of its state folder, and the files of
// Root that Protect matches.
//
// want says how many bytes of the regular file at path to read at most: a
// larger one is not read (lazy content, with its size).
func (b *Baseline) scan(want func(path string) int64, fn func(path, rel string, c *content) error) error {
	j := b.j
	runnerRel := func(path string) string {
		r, err := filepath.Rel(filepath.Dir(j.RunnerDir), path)
		if err != nil {
			return path
		}
		return filepath.ToSlash(r)
	}
	if j.Inputs {
		for _, name := range []string{"config.toml", "tree.json"} {
			path := filepath.Join(j.RunnerDir, name)
			c, err := read(path, want(path))
			if err != nil {
				return err
			}
			if err := fn(path, runnerRel(path), c); err != nil {
				return err
			}
		}
	}
	for _, f := range j.Files {
		c, err := read(f.Path, want(f.Path))
		if err != nil {
			return err
		}
		if err := fn(f.Path, f.Rel, c); err != nil {
			return err
		}
	}
	var entries []fs.DirEntry
	stateDir := filepath.Join(j.RunnerDir, "state")
	if j.RunnerDir != "" {
		var err error
		entries, err = fsutil.ReadDir(stateDir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("list %s: %w", stateDir, err)
		}
	}
	for _, e := range entries {
		if slices.Contains(j.SkipState, e.Name()) || strings.HasPrefix(e.Name(), fsutil.TempPrefix) {
			continue
		}
		path := filepath.Join(stateDir, e.Name())
		c, err := read(path, want(path))
		if err != nil {
			return err
		}
		if err := fn(path, runnerRel(path), c); err != nil {
			return err
		}
	}
	if len(j.Protect) == 0 {
		return nil
	}
	return filepath.WalkDir(j.Root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == j.Root {
				return err
			}
			return nil // gone while walked: seen as deleted
		}
		if d.IsDir() {
			if path != j.Root && (d.Name() == ".git" || path == j.RunnerDir) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(j.Root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !j.Protect.Match(rel) {
			return nil
		}
		c, err := read(path, want(path))
		if err != nil {
			return err
		}
		return fn(path, rel, c)
	})
}

// read returns a file's content and mode, nil when it does not exist; a
// folder, a named pipe or a device where a file was is content of its
// own kind, never read. A regular file larger than max is not read.
func read(path string, max int64) (*content, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	switch {
	case fi.Mode().IsRegular():
		if fi.Size() > max {
			return &content{mode: fi.Mode(), size: fi.Size(), lazy: true}, nil
		}
		data, err := readHead(path, max+1, fi.Size()) // it may have grown since
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if int64(len(data)) > max {
			return &content{mode: fi.Mode(), size: int64(len(data)), lazy: true}, nil
		}
		return &content{data: data, mode: fi.Mode(), size: int64(len(data))}, nil
	case fi.Mode().Type() == fs.ModeSymlink:
		target, err := os.Readlink(path)
		if err != nil {
			return nil, err
		}
		return &content{data: []byte(target), mode: fi.Mode(), size: int64(len(target))}, nil
	default:
		kind := fi.Mode().Type().String()
		return &content{data: []byte(kind), mode: fi.Mode(), size: int64(len(kind))}, nil
	}
}
