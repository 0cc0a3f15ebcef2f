package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Snapshot is the content of a working tree at one moment, as a tree
// object: what a commit of it would hold.
type Snapshot struct {
	Tree string // the tree object
	// Base is the commit it was compared with: the parent given, or the
	// commit checked out ("" when the branch has no commit yet).
	Base string
	// Paths are the paths where Tree differs from Base's tree, sorted as
	// git sorts them: what the work changed. None: nothing changed.
	Paths []string

	// index is the temporary index holding Tree (nil once given up),
	// which AdvanceHead makes the working tree's index.
	index *tempIndex
}

// Snapshot records the working tree's content as a tree object: tracked
// files as they are in the files (changed, or deleted), untracked files
// added, ignored files left out, and excluded paths (as for Changes: the
// runner's runtime files) as parent has them, whatever the files or the
// index say. An untracked folder that is a repository of its own is left
// out. Parent is the commit the work started from (HEAD when ""). Neither
// the working tree nor its index is modified.
//
// Paths tells whether, and where, the work changed anything; Commit
// refuses a tree equal to its parent's. No `git status` is needed on the
// way: the snapshot reads every file's metadata once, as a status would.
//
// How: the working tree's index is copied to a temporary index
// (GIT_INDEX_FILE) in the git directory, whose cached file stats spare git
// reading the unchanged files again; `git add -A` with the excluded paths
// as `:(exclude)` pathspecs brings it to the files, `git write-tree`
// writes the tree, and one `git diff-tree --raw` against parent lists the
// paths that changed. When that list holds an excluded path (the index
// had runtime files staged: an agent's `git add -A`, or an agent's commit
// changed them), the snapshot is made again on a temporary index set to
// parent's tree first (`git read-tree --reset`). A repository of its own
// that `git add -A` took in as a gitlink is removed from the temporary
// index again, unless the working tree's index already had it.
//
// The temporary index is kept, until the next Snapshot of the Repo, for
// AdvanceHead to make it the working tree's index.
func (r *Repo) Snapshot(ctx context.Context, parent string, exclude []string) (Snapshot, error) {
	s, idx, err := r.snapshot(ctx, parent, exclude)
	if err != nil {
		idx.remove()
		idx = nil
	}
	s.index = idx
	r.setPending(idx)
	return s, err
}

// snapshot is Snapshot. The temporary index is returned, for the caller
// to keep or remove.
func (r *Repo) snapshot(ctx context.Context, parent string, exclude []string) (s Snapshot, idx *tempIndex, err error) {
	if parent == "" {
		s.Base, err = r.HeadCommit(ctx)
		if errors.Is(err, ErrUnborn) {
			s.Base, err = "", nil
		}
	} else if isObjectID(parent) {
		s.Base = parent
	} else {
		s.Base, err = r.ResolveCommit(ctx, parent)
	}
	if err != nil {
		return s, nil, fmt.Errorf("snapshot %s: %w", r.top, err)
	}
	baseTree := s.Base
	if s.Base == "" {
		if baseTree, err = r.emptyTree(ctx); err != nil {
			return s, nil, err
		}
	}
	reseed := false
	for {
		if idx, err = r.newTempIndex(true); err != nil {
			return s, nil, fmt.Errorf("snapshot %s: %w", r.top, err)
		}
		if s.Tree, err = r.buildTree(ctx, idx, s.Base, exclude, reseed); err != nil {
			return s, idx, err
		}
		diff, err := r.diffRaw(ctx, baseTree, s.Tree)
		if err != nil {
			return s, idx, err
		}
		if !reseed && slices.ContainsFunc(diff, func(d rawDiff) bool { return excluded(d.path, exclude) }) {
			idx.remove()
			reseed = true // again, from parent's tree
			continue
		}
		var links []string
		for _, d := range diff {
			if d.newGitlink() && !excluded(d.path, exclude) {
				links = append(links, d.path)
			}
		}
		dropped := map[string]bool{}
		if len(links) > 0 {
			if s.Tree, dropped, err = r.dropNewGitlinks(ctx, idx, links); err != nil {
				return s, idx, err
			}
		}
		for _, d := range diff {
			if !excluded(d.path, exclude) && !dropped[d.path] {
				s.Paths = append(s.Paths, d.path)
			}
		}
		return s, idx, nil
	}
}

// buildTree brings the temporary index idx (a copy of the working tree's
// index) to the files with `git add -A`, excluded paths left as they are,
// and writes its tree. With reseed, idx is first set to base's tree (the
// empty tree when base is "").
func (r *Repo) buildTree(ctx context.Context, idx *tempIndex, base string, exclude []string, reseed bool) (string, error) {
	ix := call{env: []string{"GIT_INDEX_FILE=" + idx.path}}
	// The temporary index is written whole, even where the person keeps
	// a split index.
	const noSplit = "core.splitIndex=false"
	if reseed {
		args := []string{"-c", noSplit, "read-tree", "--reset", base}
		if base == "" {
			args = []string{"-c", noSplit, "read-tree", "--empty"}
		}
		if _, err := r.git(ctx, ix, args...); err != nil {
			return "", err
		}
	}
	// The gitlinks are left out of add, and taken by update-index
	// (gitlinks.go).
	all, err := r.indexGitlinks(ctx, idx)
	if err != nil {
		return "", err
	}
	var links []string
	for _, l := range all {
		if !excluded(l, exclude) {
			links = append(links, l)
		}
	}
	// --ignore-errors: an untracked repository without any commit would
	// otherwise stop the whole add; addErrors tells it from a real error.
	args := append([]string{"-c", noSplit, "-c", "advice.addEmbeddedRepo=false", "-c", "advice.addIgnoredFile=false",
		"add", "-A", "--ignore-errors", "--"}, excludeSpecs(append(slices.Clip(exclude), links...))...)
	c := ix
	c.ok = []int{1}
	res, err := r.git(ctx, c, args...)
	if err != nil {
		return "", err
	}
	if res.code == 1 {
		if err := addErrors(res.stderr); err != nil {
			return "", fmt.Errorf("snapshot %s: git add -A: %w", r.top, err)
		}
	}
	if err := r.updateGitlinks(ctx, idx, links); err != nil {
		return "", err
	}
	res, err = r.git(ctx, ix, "-c", noSplit, "write-tree")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(res.out)), nil
}

// addErrors returns an error unless all git add complained about (exit
// status 1) is harmless here: an excluded path that is ignored anyway (git
// reports the pathspecs that name ignored paths, exclusions included), or
// an untracked repository without any commit (left out of the snapshot
// as every untracked repository is). A stderr cut by its limit may hide
// anything, and is an error.
func addErrors(stderr string) error {
	if strings.HasSuffix(stderr, truncatedMark) {
		return errors.New(stderr)
	}
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "error: ") && !strings.HasSuffix(l, "does not have a commit checked out") ||
			strings.HasPrefix(l, "fatal: ") {
			return errors.New(stderr)
		}
	}
	return nil
}

// dropNewGitlinks removes from idx the gitlinks `git add -A` made of
// untracked repositories (those the working tree's index does not have),
// writes idx's tree again, and returns it with the paths it removed.
func (r *Repo) dropNewGitlinks(ctx context.Context, idx *tempIndex, links []string) (string, map[string]bool, error) {
	out, err := r.output(ctx, append([]string{"ls-files", "-z", "--"}, literalPaths(links)...)...)
	if err != nil {
		return "", nil, err
	}
	staged := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		staged[p] = true
	}
	dropped := map[string]bool{}
	var in bytes.Buffer
	for _, l := range links {
		if !staged[l] {
			dropped[l] = true
			in.WriteString(l)
			in.WriteByte(0)
		}
	}
	ix := call{env: []string{"GIT_INDEX_FILE=" + idx.path}}
	if in.Len() > 0 {
		c := ix
		c.stdin = in.Bytes()
		if _, err := r.git(ctx, c, "-c", "core.splitIndex=false", "update-index", "--force-remove", "-z", "--stdin"); err != nil {
			return "", nil, err
		}
	}
	res, err := r.git(ctx, ix, "-c", "core.splitIndex=false", "write-tree")
	if err != nil {
		return "", nil, err
	}
	return strings.TrimSpace(string(res.out)), dropped, nil
}

// rawDiff is one entry of `git diff-tree --raw`.
type rawDiff struct {
	oldMode, newMode string
	status           byte
	path             string
}

// newGitlink reports whether the entry adds a gitlink (a commit of another
// repository) where there was none.
func (d rawDiff) newGitlink() bool { return d.newMode == "160000" && d.oldMode != "160000" }

// diffRaw lists the differences between two trees, recursively, renames
// not looked for.
func (r *Repo) diffRaw(ctx context.Context, a, b string) ([]rawDiff, error) {
	out, err := r.output(ctx, "diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", a, b, "--")
	if err != nil {
		return nil, err
	}
	// ":<old mode> <new mode> <old id> <new id> <status>" NUL <path> NUL
	f := strings.Split(string(out), "\x00")
	var ds []rawDiff
	for i := 0; i+1 < len(f); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(f[i], ":"))
		if len(meta) != 5 || meta[4] == "" {
			return nil, fmt.Errorf("git diff-tree: unexpected entry %q", f[i])
		}
		ds = append(ds, rawDiff{oldMode: meta[0], newMode: meta[1], status: meta[4][0], path: f[i+1]})
	}
	return ds, nil
}

// emptyTree returns the id of the empty tree in the repository's object
// format.
func (r *Repo) emptyTree(ctx context.Context) (string, error) {
	res, err := r.git(ctx, call{stdin: []byte{}}, "hash-object", "-t", "tree", "--stdin")
	return strings.TrimSpace(string(res.out)), err
}

// isObjectID reports whether s is a full object name (SHA-1 or SHA-256).
func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

// updateIndex takes paths from the files into the working tree's index:
// changed content, new files, and deleted files removed. --replace lets a
// file take the place of a folder, or the reverse.
func (r *Repo) updateIndex(ctx context.Context, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	_, err := r.git(ctx, call{stdin: in.Bytes()}, "update-index", "--add", "--remove", "--replace", "-z", "--stdin")
	return err
}

// literalPaths are paths as pathspecs that select exactly them.
func literalPaths(paths []string) []string {
	specs := make([]string, len(paths))
	for i, p := range paths {
		specs[i] = ":(top,literal)" + p
	}
	return specs
}
