package runbranch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/inert"
)

// The way back (SPEC §23): `runner finish` brings a stopped run's branch
// onto its base, then removes the run's worktrees and, after a merge,
// the run branch. What is here works on the repository alone, with no
// run open: the coordinator (package loop) holds the run's lock, runs
// the guards on a merge and records what was done.

// Onto is the run branch brought onto its base, not moved yet.
type Onto struct {
	Branch, Head string // the run branch and its head
	Base, Tip    string // the base and its tip
	// Result is what the base moves to: Head for a fast-forward, else a
	// merge commit of the base's tip and Head, which no ref holds yet.
	Result      string
	FastForward bool
	// Ahead is how many commits the run branch has that the base has not.
	Ahead int
}

// ErrNothingToBring is BringOnto's error when the base holds the run
// branch already.
var ErrNothingToBring = errors.New("the base holds every commit of the run branch already")

// BringOnto makes the result of bringing branch onto base: a
// fast-forward when the base's tip is an ancestor of the run branch's
// head, else a merge commit (git.ConflictError when they conflict). No
// ref moves.
func BringOnto(ctx context.Context, repo *git.Repo, branch, base string) (*Onto, error) {
	o := &Onto{Branch: branch, Base: base}
	var err error
	if o.Head, err = repo.RefValue(ctx, git.BranchRef(branch)); err != nil {
		return nil, err
	} else if o.Head == "" {
		return nil, fmt.Errorf("the run branch %s does not exist", inert.Line(branch))
	}
	if o.Tip, err = repo.RefValue(ctx, git.BranchRef(base)); err != nil {
		return nil, err
	} else if o.Tip == "" {
		return nil, fmt.Errorf("the base %s does not exist (git.base in .runner/config.toml names the branch to bring the run onto)", inert.Line(base))
	}
	if o.Ahead, err = repo.CountAhead(ctx, o.Tip, o.Head); err != nil {
		return nil, err
	}
	if o.Ahead == 0 {
		return o, ErrNothingToBring
	}
	if o.FastForward, err = repo.IsAncestor(ctx, o.Tip, o.Head); err != nil {
		return nil, err
	}
	if o.FastForward {
		o.Result = o.Head
		return o, nil
	}
	m := git.Message{Subject: fmt.Sprintf("Merge %s into %s", branch, base),
		Body: fmt.Sprintf("The run's work, %s, brought onto %s by `runner finish`.", commits(o.Ahead), base)}
	o.Result, err = repo.Merge(ctx, o.Tip, o.Head, m)
	return o, err
}

// MoveBase moves the base from its tip to the result: in the working
// tree that has it checked out, as a fast-forward that keeps the
// person's uncommitted changes there (refused, nothing changed, when the
// move would overwrite one, or a file git does not track); else the
// branch alone, by compare-and-swap.
func MoveBase(ctx context.Context, repo *git.Repo, o *Onto) error {
	wts, err := repo.ListWorktrees(ctx)
	if err != nil {
		return err
	}
	for _, wt := range wts {
		if wt.Branch != o.Base || wt.Bare {
			continue
		}
		w, err := repo.OpenWorktree(ctx, wt.Path)
		if err != nil {
			return err
		}
		if head, err := w.HeadCommit(ctx); err != nil {
			return err
		} else if head != o.Tip {
			return fmt.Errorf("%s moved while the run was brought onto it: run `runner finish` again", inert.Line(o.Base))
		}
		if way, err := w.InTheWay(ctx, o.Tip, o.Result); err != nil {
			return err
		} else if len(way) > 0 {
			return fmt.Errorf("%s, where %s is checked out, holds files git does not track where the run's work writes: %s; move them away and run `runner finish` again",
				wt.Path, inert.Line(o.Base), inert.Line(strings.Join(firstN(way, 10), ", ")))
		}
		if err := w.FastForward(ctx, o.Result); err != nil {
			return fmt.Errorf("bring %s in %s to %s (your uncommitted changes there are in the way: commit or stash them, then run `runner finish` again): %w",
				inert.Line(o.Base), wt.Path, Short(o.Result), err)
		}
		return nil
	}
	return repo.UpdateRef(ctx, git.BranchRef(o.Base), o.Result, o.Tip)
}

// RunWorktree is a worktree of the run: the run branch's, or a slot's.
type RunWorktree struct {
	Path string
	Slot bool
}

// RunWorktrees are the run's worktrees beside the checkout: the one
// with branch checked out (not the checkout itself) and its slots'.
func RunWorktrees(ctx context.Context, repo *git.Repo, branch string) ([]RunWorktree, error) {
	wts, err := repo.ListWorktrees(ctx)
	if err != nil {
		return nil, err
	}
	slot0, err := repo.DefaultWorktreePath(branch + "-slot-0")
	if err != nil {
		return nil, err
	}
	slotDir, slotPrefix := filepath.Dir(slot0), strings.TrimSuffix(filepath.Base(slot0), "0")
	var run []RunWorktree
	for i, wt := range wts {
		switch {
		case i == 0 || wt.Bare:
			// the checkout
		case wt.Branch == branch:
			run = append(run, RunWorktree{Path: wt.Path})
		case wt.Branch == "" && filepath.Dir(wt.Path) == slotDir && strings.HasPrefix(filepath.Base(wt.Path), slotPrefix):
			run = append(run, RunWorktree{Path: wt.Path, Slot: true})
		}
	}
	return run, nil
}

// PersonsChanges are the changes in the run's worktree at path, outside
// runtime, that no attempt of the runner's holds: what is left there
// that is not the run's own. A worktree whose whole content is an
// attempt's (kept under refs/runner/attempts/) holds none.
func PersonsChanges(ctx context.Context, repo *git.Repo, path string, runtime []string) ([]string, error) {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil // its folder is gone: git forgets it when it is removed
	}
	w, err := repo.OpenWorktree(ctx, path)
	if err != nil {
		return nil, err
	}
	changes, err := w.Changes(ctx, runtime)
	if err != nil || len(changes) == 0 {
		return nil, err
	}
	head, err := w.HeadCommit(ctx)
	if err != nil {
		return nil, err
	}
	snap, err := w.Snapshot(ctx, head, runtime)
	if err != nil {
		return nil, err
	}
	if len(snap.Paths) == 0 {
		return nil, nil
	}
	as, err := w.Attempts(ctx)
	if err != nil {
		return nil, err
	}
	for i := len(as) - 1; i >= 0 && i >= len(as)-attemptsLooked; i-- {
		if t, err := w.TreeOf(ctx, as[i].Commit); err == nil && t == snap.Tree {
			return nil, nil
		}
	}
	return snap.Paths, nil
}

// firstN is the first n of s.
func firstN(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
