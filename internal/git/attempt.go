package git

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// AttemptsPrefix is where failed attempts are kept: one ref per iteration,
// on no branch.
const AttemptsPrefix = "refs/runner/attempts/"

// AttemptRef is the ref of the failed attempt of an iteration:
// refs/runner/attempts/<iteration>.
func AttemptRef(iteration int) string { return AttemptsPrefix + strconv.Itoa(iteration) }

// Attempt is a failed attempt kept under AttemptRef(Iteration).
type Attempt struct {
	Iteration int
	Commit    string
}

// SaveAttempt keeps the work of a failed iteration: a commit of tree (a
// Snapshot's) on parent (the checkpoint it started from), under
// AttemptRef(iteration), never on a branch. It returns the commit. Saving
// again is harmless: when the ref already holds a commit of the same tree
// on the same parent (a runner that died after saving it), that commit is
// returned and nothing is made. Another tree replaces the ref's commit,
// compare-and-swap. The error is ErrNoChange when tree is parent's: there
// is nothing to keep.
func (r *Repo) SaveAttempt(ctx context.Context, iteration int, tree, parent string, m Message) (string, error) {
	if iteration < 0 {
		return "", fmt.Errorf("save attempt: invalid iteration %d", iteration)
	}
	return r.saveUnder(ctx, AttemptRef(iteration), tree, parent, m)
}

// KeptPrefix is where the runner keeps what it found in a working tree
// it had to put back as a whole, when no task's attempt made it: someone
// worked in the checkout while tasks landed on it.
const KeptPrefix = "refs/runner/kept/"

// Keep is SaveAttempt under KeptPrefix+name: a commit of tree on parent,
// on no branch, made once.
func (r *Repo) Keep(ctx context.Context, name, tree, parent string, m Message) (string, error) {
	ref := KeptPrefix + name
	if err := checkRef(ref); err != nil {
		return "", err
	}
	return r.saveUnder(ctx, ref, tree, parent, m)
}

// saveUnder is SaveAttempt under ref.
func (r *Repo) saveUnder(ctx context.Context, ref, tree, parent string, m Message) (string, error) {
	for range 2 {
		old, oldTree, oldParents, err := r.commitInfo(ctx, ref)
		if err != nil {
			return "", err
		}
		if old != "" && oldTree == tree && oldParents == parent {
			return old, nil
		}
		c, err := r.Commit(ctx, tree, parent, m)
		if err != nil {
			return "", err
		}
		err = r.UpdateRef(ctx, ref, c, old)
		if errors.Is(err, ErrRefChanged) {
			continue // saved meanwhile by someone else: look again
		}
		if err != nil {
			return "", err
		}
		return c, nil
	}
	return "", fmt.Errorf("save %s: it keeps changing", ref)
}

// commitInfo returns the commit a ref points to, its tree and its
// parents (space-separated); all "" when the ref does not exist.
func (r *Repo) commitInfo(ctx context.Context, ref string) (id, tree, parents string, err error) {
	out, err := r.output(ctx, "for-each-ref", "--format=%(objectname) %(tree) %(parent)", ref)
	if err != nil {
		return "", "", "", err
	}
	for _, l := range lines(out) {
		f := strings.SplitN(l, " ", 3)
		if len(f) == 3 {
			return f[0], f[1], f[2], nil
		}
	}
	return "", "", "", nil
}

// Attempts lists the failed attempts kept, by iteration.
func (r *Repo) Attempts(ctx context.Context) ([]Attempt, error) {
	out, err := r.output(ctx, "for-each-ref", "--format=%(refname) %(objectname)", AttemptsPrefix)
	if err != nil {
		return nil, err
	}
	var as []Attempt
	for _, l := range lines(out) {
		ref, id, ok := strings.Cut(l, " ")
		n, err := strconv.Atoi(strings.TrimPrefix(ref, AttemptsPrefix))
		if !ok || err != nil {
			continue // not one of ours
		}
		as = append(as, Attempt{Iteration: n, Commit: id})
	}
	sort.Slice(as, func(i, j int) bool { return as[i].Iteration < as[j].Iteration })
	return as, nil
}

// ForeignPrefix is where the runner keeps commits it found on the run
// branch that it did not put there (an agent's own commits, a branch moved
// by anyone else), after putting the branch back: one ref per finding.
const ForeignPrefix = "refs/runner/foreign/"

// PutBack moves ref from found, where someone else moved it, back to want
// (compare-and-swap: only if it is still at found), after keeping found
// under ForeignPrefix+name, so that nothing of it is lost. It returns the
// ref found is kept under.
func (r *Repo) PutBack(ctx context.Context, ref, want, found, name string) (string, error) {
	kept := ForeignPrefix + name
	if err := checkRef(kept); err != nil {
		return "", err
	}
	if err := r.UpdateRef(ctx, kept, found, ""); err != nil {
		var rc *RefChangedError
		if !errors.As(err, &rc) || rc.Actual != found {
			return "", fmt.Errorf("keep %s's commit %s under %s: %w", ref, found, kept, err)
		}
	}
	if err := r.UpdateRef(ctx, ref, want, found); err != nil {
		return "", fmt.Errorf("put %s back at %s: %w", ref, want, err)
	}
	return kept, nil
}
