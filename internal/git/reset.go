package git

import (
	"context"
	"fmt"
)

// ResetWorktree puts the working tree and its index back to commit (a
// checkpoint): tracked files as commit has them, files it does not have
// removed (untracked ones included, and folders left empty), its index
// equal to commit's tree. Ignored files stay (node_modules, build
// outputs), and so does an untracked folder that is a repository of its
// own, as with `git clean -fd`. Excluded paths (as for Changes: the
// runner's runtime files) are never touched, in the files or in how they
// compare: even a runtime file committed in commit and changed since is
// left as it is. HEAD does not move: when an agent committed, the caller
// moves the branch back (UpdateRef) as well.
//
// Save what is to be kept first (Snapshot and SaveAttempt): the changes
// are gone afterwards.
//
// How: the working tree is snapshotted into a temporary index (see
// Snapshot), whose tree S holds exactly what is to be undone, excluded
// paths as commit has them; `git read-tree --reset -u S commit` on that
// index then changes in the files only the paths where S and commit
// differ, which excluded paths never do (a two-way merge, like a
// checkout, with nothing refused). The temporary index, now commit's tree
// with the files' current stats, becomes the working tree's index (as in
// AdvanceHead); failing that, `git read-tree --reset commit` sets it.
func (r *Repo) ResetWorktree(ctx context.Context, commit string, exclude []string) error {
	target, err := r.ResolveCommit(ctx, commit)
	if err != nil {
		return fmt.Errorf("reset %s to %s: %w", r.top, commit, err)
	}
	s, idx, err := r.snapshot(ctx, target, exclude)
	defer idx.remove()
	if err != nil {
		return fmt.Errorf("reset %s to %s: %w", r.top, commit, err)
	}
	if len(s.Paths) > 0 {
		_, err := r.git(ctx, call{env: []string{"GIT_INDEX_FILE=" + idx.path}}, "-c", "core.splitIndex=false",
			"read-tree", "--reset", "-u", s.Tree, target)
		if err != nil {
			return fmt.Errorf("reset %s to %s: %w", r.top, commit, err)
		}
	}
	return r.installOrRead(ctx, idx, target)
}

// StartDetachedAt puts a slot's worktree at commit for its next task: its
// HEAD detached at commit, its files and index as commit has them, by
// ResetWorktree (excluded paths are never touched, ignored files stay,
// everything else a previous task left is gone: changed and untracked
// files, what it staged, a commit it made). A branch that was checked out
// stays where it is; HEAD no longer follows it.
//
// Save what is to be kept first (Snapshot and SaveAttempt, or Commit and
// Integrate): the previous task's changes are gone afterwards.
//
// The files are reset before HEAD moves: when the reset fails, HEAD still
// names the commit the leftovers were made on. Either way, calling it
// again finishes the job.
func (r *Repo) StartDetachedAt(ctx context.Context, commit string, exclude []string) error {
	id, err := r.ResolveCommit(ctx, commit)
	if err != nil {
		return fmt.Errorf("start %s at %s: %w", r.top, commit, err)
	}
	if err := r.ResetWorktree(ctx, id, exclude); err != nil {
		return err
	}
	return r.DetachAt(ctx, id)
}
