package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Snapshot is the content of a working tree at one moment, as a tree
// object: what a commit of it would hold.
type Snapshot struct {
	Tree string // the tree object
	// Head is the commit checked out when it was taken ("" when the
	// branch has no commit yet).
	Head string
	// Changes are the working tree's differences from Head, excluded
	// paths left out, as Changes lists them (the same git status).
	Changes []Change

	// paths are those taken from the files into the tree (AdvanceHead
	// takes them into the working tree's index).
	paths []string
}

// Snapshot records the working tree's content as a tree object: parent's
// tree (HEAD's when parent is ""), with every path where the files differ
// from it as the files have it now: tracked files changed or deleted,
// untracked files added, ignored files left out, and excluded paths (as
// for Changes) as parent has them, whatever the files or the index say.
// An untracked folder that is a repository of its own is left out too.
// Neither the working tree nor its index is modified.
//
// Comparing Tree with parent's tree (Commit does) tells whether anything
// changed; Changes tells what, and comes from the only full git status
// the snapshot runs.
//
// How: one `git status` lists the changed paths; the working tree's index
// is copied to a temporary index (GIT_INDEX_FILE) in the git directory,
// whose cached file stats spare git reading the unchanged files again;
// `git update-index --add --remove` takes just the changed paths from the
// files into it, and `git write-tree` writes the tree. Excluded paths are
// kept out by never being given to update-index; if the index has some
// of them staged (an agent's `git add -A`), or HEAD is not parent, the
// temporary index is first set to parent's tree (`git read-tree
// --reset`), and the paths where HEAD and parent differ are taken from
// the files too. Nothing is written where the working tree's index is.
func (r *Repo) Snapshot(ctx context.Context, parent string, exclude []string) (Snapshot, error) {
	s, idx, err := r.snapshot(ctx, parent, exclude, false)
	if idx != "" {
		removeIndex(idx)
	}
	return s, err
}

// snapshot is Snapshot; with keep, the temporary index (then always made,
// holding exactly the returned tree) is returned, for the caller to
// remove with removeIndex. Otherwise the temporary index is returned
// only for the caller to remove.
func (r *Repo) snapshot(ctx context.Context, parent string, exclude []string, keep bool) (s Snapshot, idx string, err error) {
	st, err := r.status(ctx, exclude)
	if err != nil {
		return s, "", err
	}
	s.Head, s.Changes = st.head, st.changes
	base := st.head
	if parent != "" {
		if base, err = r.ResolveCommit(ctx, parent); err != nil {
			return s, "", fmt.Errorf("snapshot %s: %w", r.top, err)
		}
	}
	if base != "" && st.head == "" {
		return s, "", fmt.Errorf("snapshot %s on %s: %w", r.top, parent, ErrUnborn)
	}
	if base == st.head && len(st.changes) == 0 && !keep && base != "" {
		s.Tree, err = r.TreeOf(ctx, base)
		return s, "", err
	}

	idx, err = r.tempIndex(base != "")
	if err != nil {
		return s, "", fmt.Errorf("snapshot %s: %w", r.top, err)
	}
	env := []string{"GIT_INDEX_FILE=" + idx}
	ix := call{env: env}
	// The temporary index is written whole, even where the person keeps
	// a split index.
	const noSplit = "core.splitIndex=false"

	var paths []string
	reseed := base != st.head
	if !reseed && base != "" && len(exclude) > 0 {
		args := append([]string{"diff-index", "--cached", "--quiet", base, "--"}, literalSpecs(exclude)...)
		res, err := r.git(ctx, call{env: env, ok: []int{1}}, args...)
		if err != nil {
			return s, idx, err
		}
		reseed = res.code == 1
	}
	switch {
	case base == "":
		// No commit yet: every path of the index is in the status.
		if _, err := r.git(ctx, ix, "-c", noSplit, "read-tree", "--empty"); err != nil {
			return s, idx, err
		}
	case reseed:
		if _, err := r.git(ctx, ix, "-c", noSplit, "read-tree", "--reset", base); err != nil {
			return s, idx, err
		}
		if base != st.head {
			args := append([]string{"diff-tree", "-r", "-z", "--name-only", "--no-renames", base, st.head, "--"}, excludeSpecs(exclude)...)
			out, err := r.output(ctx, args...)
			if err != nil {
				return s, idx, err
			}
			for _, p := range strings.Split(string(out), "\x00") {
				if p != "" && !excluded(p, exclude) {
					paths = append(paths, p)
				}
			}
		}
	}
	for _, c := range st.changes {
		if c.Untracked() && strings.HasSuffix(c.Path, "/") {
			continue // a repository of its own: never a gitlink made up here
		}
		paths = append(paths, c.Path)
		if c.Orig != "" && !excluded(c.Orig, exclude) {
			paths = append(paths, c.Orig)
		}
	}
	s.paths = paths
	if err := r.updateIndex(ctx, env, paths); err != nil {
		return s, idx, err
	}
	out, err := r.git(ctx, ix, "-c", noSplit, "write-tree")
	if err != nil {
		return s, idx, err
	}
	s.Tree = strings.TrimSpace(string(out.out))
	return s, idx, nil
}

// updateIndex takes paths from the files into the index (the working
// tree's, or the one env names): changed content, new files, and deleted
// files removed. --replace lets a file take the place of a folder, or the
// reverse.
func (r *Repo) updateIndex(ctx context.Context, env []string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	args := []string{"update-index", "--add", "--remove", "--replace", "-z", "--stdin"}
	if env != nil {
		args = append([]string{"-c", "core.splitIndex=false"}, args...) // a temporary index, written whole
	}
	_, err := r.git(ctx, call{env: env, stdin: in.Bytes()}, args...)
	return err
}

// literalSpecs are the exclude paths as pathspecs that select them.
func literalSpecs(exclude []string) []string {
	var specs []string
	for _, e := range exclude {
		if e = cleanExclude(e); e != "" {
			specs = append(specs, ":(top,literal)"+e)
		}
	}
	return specs
}

// tempIndexPrefix starts the name of every temporary index in a git dir.
const tempIndexPrefix = "runner-index-"

// tempIndex makes a temporary index file in the working tree's git dir, a
// copy of its index when seed is set and it has one; otherwise the name
// of a file that does not exist, which git reads as an empty index.
func (r *Repo) tempIndex(seed bool) (string, error) {
	f, err := os.CreateTemp(r.gitDir, tempIndexPrefix+"*")
	if err != nil {
		return "", fmt.Errorf("create a temporary index: %w", err)
	}
	name := f.Name()
	src, err := os.Open(filepath.Join(r.gitDir, "index"))
	if err == nil && seed {
		_, err = io.Copy(f, src)
	}
	if src != nil {
		src.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, fs.ErrNotExist) || !seed {
		os.Remove(name)
		return name, nil
	}
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("copy the index to a temporary one: %w", err)
	}
	return name, nil
}

// removeIndex removes a temporary index and the lock file a killed git
// may have left beside it.
func removeIndex(name string) {
	os.Remove(name)
	os.Remove(name + ".lock")
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
