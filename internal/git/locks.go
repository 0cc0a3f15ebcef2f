package git

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A git command takes a lock by creating NAME.lock beside the file it
// changes (the index, HEAD, a ref, packed-refs) and removes it by renaming
// it over the file when done. A git killed on the way (with the runner
// that ran it) leaves the lock, and every later command that needs it
// fails with git's own "File exists".

// lockFreshness is how recent a lock file must be to count as taken by a
// live git, whatever else is known: a git that just created it may not
// have it open yet, or may be between closing and renaming it.
const lockFreshness = 10 * time.Second

// StaleLocks lists the lock files of the working trees at gitDirs (the
// git dirs of the trees the runner owns: .git or .git/worktrees/NAME) and
// of the refs under prefixes (full ref names' folders, "refs/heads/x/",
// or one ref, "refs/heads/x") in the repository's common dir, that no
// live process holds: older than a few seconds and, where the system
// tells (Linux: /proc), open in no process of this user. Elsewhere, a lock
// older than ten minutes is taken as stale.
func (r *Repo) StaleLocks(gitDirs []string, refs []string) []string {
	var candidates []string
	for _, dir := range gitDirs {
		for _, name := range []string{"index.lock", "HEAD.lock"} {
			candidates = append(candidates, filepath.Join(dir, name))
		}
	}
	candidates = append(candidates, filepath.Join(r.commonDir, "packed-refs.lock"))
	for _, ref := range refs {
		path := filepath.Join(r.commonDir, filepath.FromSlash(strings.TrimSuffix(ref, "/")))
		candidates = append(candidates, path+".lock")
		filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
				candidates = append(candidates, p)
			}
			return nil
		})
	}
	var stale []string
	var open map[string]bool
	for _, c := range candidates {
		fi, err := os.Lstat(c)
		if err != nil || !fi.Mode().IsRegular() || time.Since(fi.ModTime()) < lockFreshness {
			continue
		}
		if open == nil {
			var ok bool
			if open, ok = openFiles(); !ok {
				open = map[string]bool{}
				if time.Since(fi.ModTime()) < 10*time.Minute {
					continue
				}
			}
		}
		real := c
		if p, err := filepath.EvalSymlinks(c); err == nil {
			real = p
		}
		if !open[c] && !open[real] {
			stale = append(stale, c)
		}
	}
	return stale
}

// RemoveLocks removes lock files found stale (StaleLocks).
func RemoveLocks(paths []string) error {
	var errs []error
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RunnerWorktreeGitDirs lists the git dirs (.git/worktrees/NAME) of the
// linked worktrees in the runner's folder beside the main working tree
// (WorktreesSuffix): the run branch's worktree and the slots'.
func (r *Repo) RunnerWorktreeGitDirs() []string {
	main := filepath.Dir(r.commonDir)
	if filepath.Base(r.commonDir) != ".git" {
		main = r.top
	}
	folder := main + WorktreesSuffix + string(filepath.Separator)
	entries, err := os.ReadDir(filepath.Join(r.commonDir, "worktrees"))
	if err != nil {
		return nil
	}
	var dirs []string
	for _, e := range entries {
		dir := filepath.Join(r.commonDir, "worktrees", e.Name())
		data, err := os.ReadFile(filepath.Join(dir, "gitdir"))
		if err == nil && strings.HasPrefix(strings.TrimSpace(string(data)), folder) {
			dirs = append(dirs, dir)
		}
	}
	return dirs
}
