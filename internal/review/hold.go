package review

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/runbranch"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/worksnap"
)

// The reviewer may read the work, never change it (SPEC §17). Before it
// runs, the working tree is held: with git checkpoints, as a commit under
// refs/runner/reviews/<iteration>; without, as a copy in
// runs/<iteration>/review/before/ (package worksnap). After it ran,
// whatever differs is put back and what the reviewer made of it is kept:
// a commit under refs/runner/review-changes/<iteration>, or the files
// under runs/<iteration>/review/tamper/. Both holds outlive a crash, so
// that a runner resuming a review puts back what the dead one's reviewer
// changed before asking again. Runtime files (.runner/) and files git
// ignores are not the work.

// reviewsPrefix and reviewChangesPrefix hold the work given to reviewers
// and what a reviewer changed in it.
const (
	reviewsPrefix       = "refs/runner/reviews/"
	reviewChangesPrefix = "refs/runner/review-changes/"
)

// snapshotLimit bounds the copies of files kept without git; a file past
// it is compared by size and time, and a change to it cannot be put back.
const snapshotLimit = 256 << 20

// heldWork is the working tree as a reviewer of iteration n is given it.
type heldWork struct {
	v *Review
	n int
	// With git: the commit holding the work (the checkpoint itself when
	// the work changed nothing), its tree, and the run branch's commit.
	commit, tree, branch string
	// Without git: the copy.
	snap *worksnap.Snapshot
}

// holdWork holds the working tree before a reviewer of meta's iteration
// runs. When a runner that died during the review held it already, what
// changed since is put back first: changed lists it (nil when nothing),
// kept says where it is kept.
func (v *Review) holdWork(ctx context.Context, meta *state.Meta) (h *heldWork, changed []string, kept string, err error) {
	h = &heldWork{v: v, n: meta.Iteration}
	l := v.Here
	if ck := l.Tree(); ck != nil {
		repo := ck.Repo()
		ref := reviewsPrefix + strconv.Itoa(h.n)
		if h.branch, err = repo.RefValue(ctx, git.BranchRef(ck.RunBranch())); err != nil {
			return nil, nil, "", err
		}
		if h.commit, err = repo.RefValue(ctx, ref); err != nil {
			return nil, nil, "", err
		}
		if h.commit != "" {
			if h.tree, err = repo.TreeOf(ctx, h.commit); err != nil {
				return nil, nil, "", err
			}
			changed, kept, err = h.putBack(ctx)
			return h, changed, kept, err
		}
		snap, err := repo.Snapshot(ctx, ck.Head(), ck.Runtime())
		if err != nil {
			return nil, nil, "", fmt.Errorf("hold the work for the review: %w", err)
		}
		h.commit, h.tree = ck.Head(), snap.Tree
		if len(snap.Paths) > 0 {
			m := git.Message{Subject: fmt.Sprintf("the work of iteration %d, as its reviewer got it", h.n), Trailers: git.NodeTrailers(meta.Node, h.n)}
			if h.commit, err = repo.Commit(ctx, snap.Tree, ck.Head(), m); err != nil {
				return nil, nil, "", fmt.Errorf("hold the work for the review: %w", err)
			}
		}
		if err := repo.UpdateRef(ctx, ref, h.commit, ""); err != nil {
			return nil, nil, "", fmt.Errorf("hold the work for the review: %w", err)
		}
		return h, nil, "", nil
	}
	dir := filepath.Join(v.dir(h.n), "before")
	if h.snap, err = worksnap.Load(dir); err == nil {
		changed, kept, err = h.putBack(ctx)
		return h, changed, kept, err
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, "", err
	}
	exclude := []string{".git"}
	if rel, err := filepath.Rel(l.Dir(), v.Paths.Dir); err == nil && !strings.HasPrefix(rel, "..") {
		exclude = append(exclude, filepath.ToSlash(rel))
	}
	if h.snap, err = worksnap.Take(l.Dir(), exclude, dir, snapshotLimit); err != nil {
		return nil, nil, "", fmt.Errorf("hold the work for the review: %w", err)
	}
	return h, nil, "", nil
}

// putBack puts the working tree back to the work held and returns the
// paths that had changed (nil when none) and where what they held is
// kept. With git, a commit a reviewer made on the run branch is undone
// too.
func (h *heldWork) putBack(ctx context.Context) (changed []string, kept string, err error) {
	v := h.v
	if h.snap != nil {
		keep := filepath.Join(v.dir(h.n), "tamper")
		changes, err := h.snap.Restore(keep)
		if err != nil {
			return nil, "", fmt.Errorf("put back what the reviewer changed: %w", err)
		}
		for _, c := range changes {
			p := c.Path + " (" + c.Change + ")"
			if c.Lost != "" {
				p += " [not put back: " + c.Lost + "]"
			}
			changed = append(changed, p)
		}
		if len(changed) > 0 {
			kept = v.Paths.Rel(keep)
		}
		return changed, kept, nil
	}
	ck := v.Here.Tree()
	repo, branch := ck.Repo(), ck.RunBranch()
	// With parallel slots the run branch moves under a reviewer when
	// another slot's task lands: it is then where the runner put it, and
	// stays there.
	want := h.branch
	if landed := v.Branch.Landed(); landed != "" {
		want = landed
	}
	if cur, err := repo.RefValue(ctx, git.BranchRef(branch)); err != nil {
		return nil, "", err
	} else if cur != want {
		if err := repo.UpdateRef(ctx, git.BranchRef(branch), want, cur); err != nil {
			return nil, "", fmt.Errorf("move the run branch back where the runner left it: %w", err)
		}
		changed = append(changed, "the run branch "+branch+" (moved to "+runbranch.Short(cur)+")")
	}
	snap, err := repo.Snapshot(ctx, ck.Head(), ck.Runtime())
	if err != nil {
		return nil, "", fmt.Errorf("look for what the reviewer changed: %w", err)
	}
	if snap.Tree == h.tree {
		return changed, "", nil
	}
	paths, err := repo.ChangedPaths(ctx, h.tree, snap.Tree)
	if err != nil {
		return nil, "", err
	}
	changed = append(changed, paths...)
	ref := reviewChangesPrefix + strconv.Itoa(h.n)
	m := git.Message{Subject: fmt.Sprintf("what the reviewer of iteration %d changed (reverted)", h.n)}
	c, err := repo.Commit(ctx, snap.Tree, h.commit, m)
	if err != nil {
		return nil, "", fmt.Errorf("keep what the reviewer changed: %w", err)
	}
	old, err := repo.RefValue(ctx, ref)
	if err == nil {
		err = repo.UpdateRef(ctx, ref, c, old)
	}
	if err != nil {
		return nil, "", fmt.Errorf("keep what the reviewer changed: %w", err)
	}
	if err := repo.ResetWorktree(ctx, h.commit, ck.Runtime()); err != nil {
		return nil, "", fmt.Errorf("put back what the reviewer changed: %w", err)
	}
	return changed, ref, nil
}

// release forgets the held work once the verdict is durable: the ref, or
// the copy. A failure only leaves it behind, and is logged.
func (h *heldWork) release(ctx context.Context) {
	var err error
	if h.snap != nil {
		err = h.snap.Remove()
	} else {
		err = h.v.Here.Tree().Repo().DeleteRef(ctx, reviewsPrefix+strconv.Itoa(h.n), "")
	}
	if err != nil {
		h.v.Log.Warn("could not remove the work held for the review", "iteration", h.n, "err", err)
	}
}

// changes returns the attempt's changes for the reviewer, at most limit
// bytes, and a line saying what they are: with git, the diff from the
// last checkpoint to the work; without, the files changed since the
// attempt started, with their content.
func (h *heldWork) changes(ctx context.Context, since time.Time, limit int) (text, note string, err error) {
	if h.snap == nil {
		ck := h.v.Here.Tree()
		text, cut, err := ck.Repo().Diff(ctx, ck.Head(), h.tree, limit)
		if err != nil {
			return "", "", err
		}
		note = fmt.Sprintf("git diff from the last checkpoint (%s) to the work, the runner's own .runner/ left out", runbranch.Short(ck.Head()))
		if text == "" {
			note += ": no change"
		}
		if cut {
			note += " (cut at " + strconv.Itoa(limit) + " bytes)"
		}
		return text, note + ":", nil
	}
	files := h.snap.Since(since)
	note = "No git here: the files written since the attempt started, with their content (files it deleted are not seen):"
	if len(files) == 0 {
		return "", "No git here, and no file was written since the attempt started.", nil
	}
	var b strings.Builder
	for _, f := range files {
		if b.Len() >= limit {
			fmt.Fprintf(&b, "--- %s (%d bytes; left out, over the budget)\n", f.Path, f.Size)
			continue
		}
		data, err := h.snap.Read(f, 16<<10)
		switch {
		case err != nil:
			fmt.Fprintf(&b, "--- %s (%d bytes; not read: %v)\n", f.Path, f.Size, err)
		case !utf8.Valid(data) || strings.ContainsRune(string(data), 0):
			fmt.Fprintf(&b, "--- %s (%d bytes, binary)\n", f.Path, f.Size)
		default:
			fmt.Fprintf(&b, "--- %s (%d bytes)\n%s\n", f.Path, f.Size, strings.TrimRight(string(data), "\n"))
			if int64(len(data)) < f.Size {
				b.WriteString("[... the rest of the file left out]\n")
			}
		}
	}
	return b.String(), note, nil
}

// dir is the folder of iteration n's review.
func (v *Review) dir(n int) string { return filepath.Join(v.Paths.RunDir(n), "review") }
