package git

import (
	"context"
	"fmt"
)

// What `runner finish` needs of git (SPEC §23): a look into a worktree
// of the run before it is removed, the person's branch fast-forwarded in
// the working tree that has it checked out.

// OpenWorktree opens the worktree of the repository registered at path:
// r itself when it is r's.
func (r *Repo) OpenWorktree(ctx context.Context, path string) (*Repo, error) {
	abs, wt, err := r.findWorktree(ctx, path)
	if err != nil {
		return nil, err
	}
	if wt == nil {
		return nil, fmt.Errorf("open worktree %s: not a worktree of %s", abs, r.top)
	}
	if realPath(wt.Path) == realPath(r.top) {
		return r, nil
	}
	return r.openWorktree(wt.Path)
}

// FastForward moves the branch checked out in this working tree to
// commit, a descendant of its head, and its files with it, as `git
// merge --ff-only` does: the person's uncommitted changes stay, and a
// change or an untracked file the move would overwrite makes it fail
// with nothing changed.
func (r *Repo) FastForward(ctx context.Context, commit string) error {
	if err := checkRev(commit); err != nil {
		return err
	}
	_, err := r.git(ctx, call{}, "merge", "--ff-only", "--no-edit", "--quiet", commit)
	return err
}
