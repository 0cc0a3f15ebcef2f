package git

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A linked worktree's files are the agent's, and so is the .git file at
// its top that tells git where its git dir is ("gitdir: <path>"): an agent
// that rewrites it to name a git dir of its own making (with a config of
// its own: an fsmonitor, hooks, filters) would have every git command run
// there use that one. The runner never reads it. The git dir of a linked
// worktree is found in the repository's own record, from the common dir
// found once at Open: the folder <common>/worktrees/<id> whose gitdir
// file names <worktree>/.git, as `git worktree list` finds it. Every call
// then names that folder (repoEnv).

// worktreeAdminDir returns the git dir of the linked worktree at path
// (<common>/worktrees/<id>), found from the gitdir files of the
// repository's worktrees, never from path/.git, and path with its
// symbolic links resolved.
func (r *Repo) worktreeAdminDir(path string) (admin, top string, err error) {
	top = realPath(path)
	dir := filepath.Join(r.commonDir, "worktrees")
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("find the git dir of worktree %s: %w", path, err)
	}
	var found []string
	for _, e := range entries {
		if !e.IsDir() { // a symbolic link is no folder git made
			continue
		}
		d := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(filepath.Join(d, "gitdir"))
		if err != nil {
			continue
		}
		p := strings.TrimRight(string(b), "\r\n")
		if !filepath.IsAbs(p) { // worktree.useRelativePaths (git 2.48)
			p = filepath.Join(d, p)
		}
		if filepath.Base(p) == ".git" && realPath(filepath.Dir(p)) == top {
			found = append(found, d)
		}
	}
	switch len(found) {
	case 0:
		return "", "", fmt.Errorf("%s is not a linked worktree of %s: no git dir in %s names it", path, r.commonDir, dir)
	case 1:
		return found[0], top, nil
	}
	return "", "", fmt.Errorf("%s is claimed by several git dirs (%s): `git worktree prune` or remove the one that is not git's", path, strings.Join(found, ", "))
}

// openWorktree returns the Repo of the linked worktree at path, with the
// git dir the repository's record gives it.
func (r *Repo) openWorktree(path string) (*Repo, error) {
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, fmt.Errorf("open worktree %s: %w", path, err)
	}
	admin, top, err := r.worktreeAdminDir(path)
	if err != nil {
		return nil, err
	}
	w := &Repo{x: r.x, opts: r.opts, top: top, gitDir: admin, commonDir: r.commonDir}
	w.removeStaleIndexes()
	return w, nil
}

// relink writes the .git file of the linked worktree at top back to what
// git wrote there (the absolute path of its git dir), when it says
// anything else: the git commands that read it (worktree remove checks
// that it names the git dir it removes) find the runner's, not the
// agent's. A .git that is no longer a file is left to git to refuse.
func relink(top, admin string) error {
	dotgit := filepath.Join(top, ".git")
	want := "gitdir: " + admin + "\n"
	if b, err := os.ReadFile(dotgit); err == nil && string(b) == want {
		return nil
	}
	if st, err := os.Lstat(dotgit); err == nil && !st.Mode().IsRegular() {
		return nil
	}
	if err := os.WriteFile(dotgit, []byte(want), 0o644); err != nil {
		return fmt.Errorf("restore the .git file of worktree %s: %w", top, err)
	}
	return nil
}
