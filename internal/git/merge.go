package git

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// A branch brought into another (SPEC §23): the person's base branch
// merged into the run branch while the run follows it, and the run
// branch merged into the base by `runner finish`. As for Integrate,
// everything happens in git's object store: no working tree, no index,
// no ref is touched; the caller runs the guards on the result and moves
// the branch by compare-and-swap.

// IsAncestor reports whether commit a is an ancestor of commit b, or b
// itself: a branch at b holds everything of a.
func (r *Repo) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	if err := checkRev(a); err != nil {
		return false, err
	}
	if err := checkRev(b); err != nil {
		return false, err
	}
	return r.isAncestor(ctx, a, b)
}

// CountAhead is how many commits to has that from does not (`git
// rev-list --count from..to`).
func (r *Repo) CountAhead(ctx context.Context, from, to string) (int, error) {
	if err := checkRev(from); err != nil {
		return 0, err
	}
	if err := checkRev(to); err != nil {
		return 0, err
	}
	out, err := r.output(ctx, "rev-list", "--count", from+".."+to, "--")
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return 0, fmt.Errorf("unexpected output of git rev-list --count: %q", out)
	}
	return n, nil
}

// Merge merges the commit theirs into the commit ours as `git merge`
// would, from their merge base, and returns the merge commit: its tree
// the merged one, its parents ours then theirs, its message m. The error
// is a *ConflictError (Merge set, matching ErrConflict) naming the
// conflicted files when the two changed the same lines; ErrNoChange when
// ours holds theirs already (it is theirs' descendant). A theirs that
// descends from ours is merged all the same (the caller fast-forwards
// instead when it wants to). It needs git 2.38 (CheckIntegrate).
func (r *Repo) Merge(ctx context.Context, ours, theirs string, m Message) (string, error) {
	if err := r.CheckIntegrate(); err != nil {
		return "", err
	}
	if err := m.check(); err != nil {
		return "", err
	}
	oursID, err := r.ResolveCommit(ctx, ours)
	if err != nil {
		return "", fmt.Errorf("merge %s into %s: %w", theirs, ours, err)
	}
	theirsID, err := r.ResolveCommit(ctx, theirs)
	if err != nil {
		return "", fmt.Errorf("merge %s into %s: %w", theirs, ours, err)
	}
	if held, err := r.isAncestor(ctx, theirsID, oursID); err != nil {
		return "", err
	} else if held {
		return "", fmt.Errorf("merge %s into %s: %w: it holds it already", theirs, ours, ErrNoChange)
	}
	args := []string{"merge-tree", "--write-tree", "-z", "--name-only", oursID, theirsID}
	mt, conflicted, err := r.mergeTree(ctx, args)
	if err != nil {
		return "", err
	}
	if conflicted {
		err := r.conflictError(ctx, oursID, theirsID, mt)
		if c, ok := err.(*ConflictError); ok {
			c.Merge = true
		}
		return "", err
	}
	return r.commitParents(ctx, mt.tree, []string{oursID, theirsID}, m)
}
