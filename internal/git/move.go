package git

import (
	"context"
	"fmt"
)

// Two cheaper ways than ResetWorktree to bring a working tree to a
// commit, for when the caller knows what the working tree holds: they
// write only the paths that differ, and skip the snapshot (`git add -A`
// and `git write-tree`, a read of every file's metadata) that
// ResetWorktree needs to find out. On a 10,000-file repository that is
// most of the cost (BENCHMARKS.md §11, §12).

// ResetFromSnapshot is ResetWorktree for a working tree whose content is
// snap, this Repo's last Snapshot, unchanged since it was taken: its
// temporary index, which holds snap's tree with the files' stats, is
// brought to commit (`git read-tree --reset -u`, the two-way merge of
// ResetWorktree) and becomes the working tree's index. HEAD does not
// move. Excluded paths are left as they are when commit has them as
// snap's base does, which holds for a commit of the task snap is the work
// of, replayed onto the run branch (Integrate): the runner's commits
// never change them.
//
// When the temporary index is no longer there (another Snapshot was
// taken since), it is ResetWorktree.
func (r *Repo) ResetFromSnapshot(ctx context.Context, snap Snapshot, commit string, exclude []string) error {
	if !r.takePending(snap.index) {
		return r.ResetWorktree(ctx, commit, exclude)
	}
	idx := snap.index
	defer idx.remove()
	if _, err := r.git(ctx, call{env: []string{"GIT_INDEX_FILE=" + idx.path}}, "-c", "core.splitIndex=false",
		"read-tree", "--reset", "-u", snap.Tree, commit); err != nil {
		return fmt.Errorf("reset %s to %s: %w", r.top, commit, err)
	}
	return r.installOrRead(ctx, idx, commit)
}

// Follow brings a working tree whose index and files are at commit from
// (nothing changed since) to commit to, as `git checkout` moves between
// commits: `git read-tree -m -u from to` writes only the paths where the
// two differ. A change in the working tree on one of those paths (or an
// untracked file in the way) makes it fail with nothing changed: the
// caller decides what to do with it (ResetWorktree, having kept what is
// to be kept). Changes elsewhere stay. HEAD does not move: the caller
// moves it (it already follows a branch that moved).
//
// The merge is made on a copy of the index, which then replaces it, as
// in ResetWorktree: a runner killed on the way leaves the index as it
// was, the files partly moved, which a snapshot then sees as changes.
func (r *Repo) Follow(ctx context.Context, from, to string) error {
	if err := checkRev(from); err != nil {
		return err
	}
	if err := checkRev(to); err != nil {
		return err
	}
	idx, err := r.newTempIndex(true)
	if err != nil {
		return fmt.Errorf("bring %s from %s to %s: %w", r.top, from, to, err)
	}
	defer idx.remove()
	if _, err := r.git(ctx, call{env: []string{"GIT_INDEX_FILE=" + idx.path}}, "-c", "core.splitIndex=false",
		"read-tree", "-m", "-u", from, to); err != nil {
		return fmt.Errorf("bring %s from %s to %s: %w", r.top, from, to, err)
	}
	return r.installOrRead(ctx, idx, to)
}

// MoveDetached is StartDetachedAt for a working tree known to be at
// commit from, nothing changed since: Follow, then HEAD detached at to.
func (r *Repo) MoveDetached(ctx context.Context, from, to string) error {
	if err := r.Follow(ctx, from, to); err != nil {
		return err
	}
	return r.DetachAt(ctx, to)
}

// DetachAt moves HEAD alone to commit, detached; the index and the files
// stay as they are (they already hold commit's content).
func (r *Repo) DetachAt(ctx context.Context, commit string) error {
	if _, err := r.git(ctx, call{}, "update-ref", "--no-deref", "-m", "runner", "HEAD", commit); err != nil {
		return fmt.Errorf("detach the HEAD of %s at %s: %w", r.top, commit, err)
	}
	return nil
}

// installOrRead makes the temporary index idx, at commit, the working
// tree's index; when it cannot (the index changed since idx was copied
// from it, or a git command holds its lock), the index is set to commit
// with `git read-tree --reset`.
func (r *Repo) installOrRead(ctx context.Context, idx *tempIndex, commit string) error {
	if r.install(idx) {
		return nil
	}
	if _, err := r.git(ctx, call{}, "read-tree", "--reset", commit); err != nil {
		return fmt.Errorf("reset the index of %s to %s: %w", r.top, commit, err)
	}
	return nil
}
