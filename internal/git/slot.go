package git

import (
	"context"
	"fmt"
)

// DetachedWorktree returns the linked worktree at path, as a parallel
// slot uses it: one already there with a detached HEAD is reused wherever
// its HEAD is (the caller puts it where it wants, StartDetachedAt); none
// there is created detached at commit (AddDetachedWorktree), and whether
// it was is returned. One there on a branch is an error, as is a path
// that is no worktree of the repository.
func (r *Repo) DetachedWorktree(ctx context.Context, path, commit string) (*Repo, bool, error) {
	abs, wt, err := r.findWorktree(ctx, path)
	if err != nil {
		return nil, false, err
	}
	if wt != nil && !wt.Prunable {
		if wt.Branch != "" {
			return nil, false, fmt.Errorf("worktree %s has %s checked out, not a detached HEAD; remove it (`git worktree remove %s`) and run again", abs, describeHead(wt), abs)
		}
		w, err := r.openWorktree(wt.Path)
		return w, false, err
	}
	return r.AddDetachedWorktree(ctx, abs, commit)
}
