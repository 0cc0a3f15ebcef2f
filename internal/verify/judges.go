package verify

import (
	"bytes"
	"errors"
	"fmt"
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
type content struct {
	data []byte
	mode fs.FileMode
}

func (c *content) equal(o *content) bool {
	return c.mode.Type() == o.mode.Type() && c.mode.Perm() == o.mode.Perm() && bytes.Equal(c.data, o.data)
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
	err := b.scan(func(path, rel string, c *content) error {
		if c == nil {
			return nil
		}
		b.size += int64(len(c.data))
		if b.size > j.Limit {
			return fmt.Errorf("the judged files (the runner's inputs and verify.protect) hold more than %d MiB; narrow verify.protect in .runner/config.toml", j.Limit>>20)
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
	err := b.scan(func(path, rel string, c *content) error {
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

// Keep copies what the agent left at each changed path under dir, at
// the path's Rel, and returns where each went (relative to dir; "" for a
// deletion). A symbolic link is kept as a file holding its target.
func (b *Baseline) Keep(changes []Change, dir string) ([]string, error) {
	kept := make([]string, len(changes))
	for i, c := range changes {
		if c.now == nil {
			continue
		}
		dst := filepath.Join(dir, filepath.FromSlash(c.Rel))
		if err := fsutil.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return kept, err
		}
		if err := fsutil.WriteFileAtomic(dst, c.now.data, 0o644); err != nil {
			return kept, err
		}
		kept[i] = filepath.ToSlash(c.Rel)
	}
	return kept, nil
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
func (b *Baseline) scan(fn func(path, rel string, c *content) error) error {
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
			c, err := read(path)
			if err != nil {
				return err
			}
			if err := fn(path, runnerRel(path), c); err != nil {
				return err
			}
		}
	}
	for _, f := range j.Files {
		c, err := read(f.Path)
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
		c, err := read(path)
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
		c, err := read(path)
		if err != nil {
			return err
		}
		return fn(path, rel, c)
	})
}

// read returns a file's content and mode, nil when it does not exist; a
// folder, a named pipe or a device where a file was is content of its
// own kind, never read.
func read(path string) (*content, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	switch {
	case fi.Mode().IsRegular():
		data, err := fsutil.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		return &content{data: data, mode: fi.Mode()}, nil
	case fi.Mode().Type() == fs.ModeSymlink:
		target, err := os.Readlink(path)
		if err != nil {
			return nil, err
		}
		return &content{data: []byte(target), mode: fi.Mode()}, nil
	default:
		return &content{data: []byte(fi.Mode().Type().String()), mode: fi.Mode()}, nil
	}
}
