// Package worksnap keeps what a working tree holds, where git cannot, so
// that what a process changed in it can be told and put back: a manifest
// of every folder, regular file and symbolic link outside the paths left
// out (the runner's .runner/, .git), with a copy of each file's content
// as long as the copies stay within a size limit. The runner takes one
// before a process that may read but must not change the work (the
// reviewer, SPEC §17), and after it puts back whatever changed, keeping
// the changed versions aside.
//
// The working tree belongs to an untrusted process: it is read and
// written through an os.Root, so that no path it turned into a symbolic
// link leads outside the tree, and a folder it replaced with a link is
// put back as a folder before anything is written beneath it. The copies
// and the manifest live in a folder of the runner's own, written with
// package fsutil.
package worksnap

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/strictjson"
)

// Kinds of entries.
const (
	KindDir  = "dir"
	KindFile = "file"
	KindLink = "link"
)

// Entry is one path of the tree as the snapshot saw it.
type Entry struct {
	Path   string      `json:"path"` // slash-separated, relative to the root
	Kind   string      `json:"kind"`
	Mode   fs.FileMode `json:"mode,omitempty"` // permission bits
	Size   int64       `json:"size,omitempty"`
	MTime  time.Time   `json:"mtime,omitzero"`
	Sum    string      `json:"sum,omitempty"`    // sha256 of a file with a copy
	Copy   string      `json:"copy,omitempty"`   // its copy's name in the snapshot folder
	Target string      `json:"target,omitempty"` // a link's target
}

// Manifest is manifest.json, written last: a snapshot folder without one
// is incomplete.
type Manifest struct {
	Root    string    `json:"root"`
	Exclude []string  `json:"exclude"`
	Taken   time.Time `json:"taken"`
	Entries []Entry   `json:"entries"`
}

// Snapshot is a working tree's content at one moment, kept in Dir.
type Snapshot struct {
	Dir string
	Manifest
	byPath map[string]*Entry
}

const manifestName = "manifest.json"

// Take records the tree at root, every path but those under exclude
// (slash-separated, relative to root), in dir (created; emptied first):
// a copy of each regular file while the copies take at most limit bytes,
// and the manifest.
func Take(root string, exclude []string, dir string, limit int64) (*Snapshot, error) {
	if err := fsutil.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := fsutil.MkdirAll(filepath.Join(dir, "files"), 0o755); err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	s := &Snapshot{Dir: dir, Manifest: Manifest{Root: root, Exclude: exclude, Taken: time.Now().UTC()}}
	var copied int64
	err = walk(r, ".", exclude, func(p string, info fs.FileInfo) error {
		e := Entry{Path: p, Mode: info.Mode().Perm(), MTime: info.ModTime().UTC()}
		switch {
		case info.IsDir():
			e.Kind = KindDir
		case info.Mode()&fs.ModeSymlink != 0:
			e.Kind = KindLink
			if e.Target, err = r.Readlink(p); err != nil {
				return err
			}
		default:
			e.Kind, e.Size = KindFile, info.Size()
			if copied+info.Size() <= limit {
				e.Copy = strconv.Itoa(len(s.Entries))
				if e.Sum, err = copyOut(r, p, filepath.Join(dir, "files", e.Copy)); err != nil {
					return err
				}
				copied += info.Size()
			}
		}
		s.Entries = append(s.Entries, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("keep a copy of the working tree %s: %w", root, err)
	}
	if err := fsutil.ReplaceJSON(filepath.Join(dir, manifestName), &s.Manifest, fsutil.Durable); err != nil {
		return nil, err
	}
	s.index()
	return s, nil
}

// Load reads the snapshot kept in dir; the error matches fs.ErrNotExist
// when there is none (or it was never completed).
func Load(dir string) (*Snapshot, error) {
	data, err := fsutil.ReadLimited(filepath.Join(dir, manifestName), 256<<20, true)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Dir: dir}
	if err := strictjson.Decode(data, &s.Manifest, 8); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, manifestName), err)
	}
	s.index()
	return s, nil
}

// Remove removes the snapshot folder.
func (s *Snapshot) Remove() error { return fsutil.RemoveAll(s.Dir) }

func (s *Snapshot) index() {
	s.byPath = make(map[string]*Entry, len(s.Entries))
	for i := range s.Entries {
		s.byPath[s.Entries[i].Path] = &s.Entries[i]
	}
}

// Since lists the files the snapshot holds that were modified at or
// after t, in path order: what a process that ran from t on wrote.
func (s *Snapshot) Since(t time.Time) []Entry {
	var out []Entry
	for _, e := range s.Entries {
		if e.Kind == KindFile && !e.MTime.Before(t) {
			out = append(out, e)
		}
	}
	return out
}

// Read returns the content of a file the snapshot holds a copy of, at
// most limit bytes of it.
func (s *Snapshot) Read(e Entry, limit int64) ([]byte, error) {
	if e.Copy == "" {
		return nil, fmt.Errorf("%s: no copy kept", e.Path)
	}
	f, err := fsutil.Open(filepath.Join(s.Dir, "files", e.Copy))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}

// walk calls fn for start and every path under it in r ("." for all of
// r, which fn is not called for) but the excluded ones, folders before
// what they hold, without following links.
func walk(r *os.Root, start string, exclude []string, fn func(p string, info fs.FileInfo) error) error {
	return fs.WalkDir(r.FS(), start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if excluded(p, exclude) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		info, err := r.Lstat(p)
		if err != nil {
			return err
		}
		if !info.IsDir() && !info.Mode().IsRegular() && info.Mode()&fs.ModeSymlink == 0 {
			return nil // FIFOs, sockets, devices: not the work
		}
		return fn(p, info)
	})
}

func excluded(p string, exclude []string) bool {
	for _, x := range exclude {
		x = strings.TrimSuffix(x, "/")
		if p == x || strings.HasPrefix(p, x+"/") {
			return true
		}
	}
	return false
}

// copyOut copies the file p of r to dst and returns its sha256.
func copyOut(r *os.Root, p, dst string) (string, error) {
	in, err := r.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := fsutil.Create(dst)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(out, h), in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return hex.EncodeToString(h.Sum(nil)), err
}

// sumOf returns the sha256 of the file p of r.
func sumOf(r *os.Root, p string) (string, error) {
	f, err := r.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
