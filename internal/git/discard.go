package git

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// discardTimeout bounds each step of DiscardWork: it reads no file's
// content, so it is much quicker than a snapshot of the same tree, but it
// must not be cut short by the bound that the snapshot ran out of.
const discardTimeout = 30 * time.Minute

// DiscardWork puts the working tree back at commit without taking what
// it holds as a tree first, for work git could not take in time (an
// agent's 64 GiB output, a million small files): tracked files as commit
// has them (`git read-tree --reset -u`, which reads no file's content to
// overwrite it), then the untracked files and folders removed (`git
// clean -fd`); ignored files and the excluded paths (the runner's
// runtime files) stay. HEAD does not move. Nothing of what it removes is
// kept.
func (r *Repo) DiscardWork(ctx context.Context, commit string, exclude []string) error {
	if err := checkRev(commit); err != nil {
		return err
	}
	long := call{timeout: discardTimeout}
	if _, err := r.git(ctx, long, "read-tree", "--reset", "-u", commit); err != nil {
		return fmt.Errorf("put %s back at %s: %w", r.top, commit, err)
	}
	args := []string{"clean", "-f", "-d", "-q", "--", "."}
	for _, e := range exclude {
		args = append(args, ":(top,exclude)"+e)
	}
	long.dir = r.top
	if _, err := r.git(ctx, long, args...); err != nil {
		return fmt.Errorf("remove the untracked files of %s: %w", r.top, err)
	}
	return nil
}

// SizedPath is a path of the working tree with its size in bytes, or for
// a folder the size and number of the files below it.
type SizedPath struct {
	Path  string
	Bytes int64
	Files int
}

// LargestUntracked names what makes the untracked files of the working
// tree hard to take as a tree: the n largest files, and the n folders
// (at the top level and one below) holding the most files. Ignored files
// and the excluded paths do not count. The list comes from `git
// ls-files --others`, which reads no file's content, under a long bound
// of its own.
func (r *Repo) LargestUntracked(ctx context.Context, n int, exclude []string) (files, folders []SizedPath, err error) {
	args := []string{"ls-files", "-z", "--others", "--exclude-standard", "--", "."}
	for _, e := range exclude {
		args = append(args, ":(top,exclude)"+e)
	}
	var out bytes.Buffer
	if _, err := r.git(ctx, call{dir: r.top, stdout: &out, timeout: discardTimeout}, args...); err != nil {
		return nil, nil, err
	}
	byFolder := map[string]*SizedPath{}
	for _, p := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte{0}), []byte{0}) {
		if len(p) == 0 {
			continue
		}
		rel := string(p)
		var size int64
		if fi, err := os.Lstat(filepath.Join(r.top, filepath.FromSlash(rel))); err == nil {
			size = fi.Size()
		}
		files = append(files, SizedPath{Path: rel, Bytes: size, Files: 1})
		for _, dir := range topFolders(rel) {
			f := byFolder[dir]
			if f == nil {
				f = &SizedPath{Path: dir + "/"}
				byFolder[dir] = f
			}
			f.Bytes += size
			f.Files++
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Bytes > files[j].Bytes })
	files = files[:min(n, len(files))]
	for _, f := range byFolder {
		folders = append(folders, *f)
	}
	sort.Slice(folders, func(i, j int) bool {
		if folders[i].Files != folders[j].Files {
			return folders[i].Files > folders[j].Files
		}
		return folders[i].Path < folders[j].Path
	})
	folders = folders[:min(n, len(folders))]
	return files, folders, nil
}

// topFolders are the first and second folders of rel ("a", "a/b"), as
// far as it has them.
func topFolders(rel string) []string {
	var out []string
	for i, depth := 0, 0; i < len(rel) && depth < 2; i++ {
		if rel[i] == '/' {
			out = append(out, rel[:i])
			depth++
		}
	}
	return out
}
