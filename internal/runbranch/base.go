package runbranch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/inert"
)

// The base (SPEC §23): the branch the run branch comes from and goes
// back to, the person's (main). It is git.base, or the branch the
// checkout was on when the run branch was made, recorded then (Hooks).
// The run branch follows it: with no task of its own yet, it starts
// from the base's tip at each run; with work, the base is merged in
// before the next task (git.follow_base), the guards run on the result
// first. A conflict, or guards that fail on the result, stop following
// that tip: the run goes on from where it was, and tries again once the
// base moves again.
//
// Crash safety: while the run branch's working tree holds a result the
// branch is not at yet (the base's tip, or the merge under its guards),
// refs/runner/following points to it; a runner that finds it at start
// puts the working tree back at the run branch's head (recoverFollow).
// The branch moves only by compare-and-swap from the head the runner
// recorded, after the working tree holds the result.

// followingRef marks a move of the run branch's working tree to the base
// that is under way.
const followingRef = "refs/runner/following"

// Followed is what FollowBase did: the base's tip, how far it was ahead
// of the run branch, and what came of it.
type Followed struct {
	Kind  string // FollowedFastForward, FollowedMerge, FollowedConflict, FollowedGuards, FollowedBehind
	Base  string
	Tip   string // the base's tip
	Ahead int    // its commits the run branch did not have
	// Head is the run branch's head after it: the base's tip, or the
	// merge; the one before when it did not move.
	Head  string
	Files []string // the conflicted files
}

// What FollowBase did (Followed.Kind).
const (
	FollowedFastForward = "fast_forward" // the run had no work: it starts from the base's tip
	FollowedMerge       = "merge"        // the base merged in
	FollowedConflict    = "conflict"     // the merge conflicted: not followed
	FollowedGuards      = "guards"       // the guards failed on the merge: not followed
	FollowedBehind      = "behind"       // named only (git.follow_base = false)
)

// BaseGuards runs the guards in work, the run branch's working tree,
// which holds merge (the base merged into head), with their logs in
// logs, judged against head's baseline (what they find becomes merge's
// when they pass); it reports whether they passed.
type BaseGuards func(ctx context.Context, work, logs, head, merge string) (bool, error)

// Base is the base of the run branch; "" when it is not known.
func (b *Branch) Base() string {
	if b == nil {
		return ""
	}
	return b.base
}

// settleBase decides the base of a run branch opened on the checkout's
// branch cur ("" when detached), which it created or found: git.base;
// else cur when the run branch was made from it now, which is recorded;
// else the one recorded; else, for a run branch an older runner made,
// the checkout's branch when it is not the run branch, recorded too.
func (b *Branch) settleBase(cfg *config.Config, branch, cur string, created bool) {
	switch recorded := b.hooks.recordedBase(); {
	case cfg.Git.Base != "":
		b.base = cfg.Git.Base
	case created:
		b.base = cur
		b.hooks.setBase(cur)
	case recorded != "":
		b.base = recorded
	case cur != "" && cur != branch:
		b.base = cur
		b.hooks.setBase(cur)
	}
}

func (h Hooks) recordedBase() string {
	if h.Base == nil {
		return ""
	}
	return h.Base()
}

func (h Hooks) setBase(name string) {
	if h.SetBase != nil {
		h.SetBase(name)
	}
}

// StartFromBase moves the run branch to the base's tip when the run
// has no work of its own and the base moved, at an iteration boundary
// (first: the run's first; later ones only with git.follow_base), before
// the preflight: the run starts from the person's latest. node and
// lastNode are as for MergeBase. It returns what it did, nil when
// nothing.
func (b *Branch) StartFromBase(ctx context.Context, cfg *config.Config, first bool, node, lastNode string, outside func(func())) (*Followed, error) {
	if !first && !cfg.Git.FollowBase {
		return nil, nil
	}
	f, own, unlock, err := b.lookBase(ctx, first, node, lastNode, outside)
	if f == nil || err != nil {
		return nil, err
	}
	defer unlock()
	if !own {
		return nil, nil // MergeBase's
	}
	return f, b.fastForward(ctx, f)
}

// MergeBase brings the base into the run branch when it moved and the
// run has work of its own, at an iteration boundary, before task node
// starts in the run branch's working tree (node "" with parallel slots,
// whose tasks start in their own and land on the new head as on any):
// the run says how far the base is ahead, and with git.follow_base
// merges it in, guards (nil: none) run on the result first. A working
// tree that holds the same task's failed attempt (lastNode: the task of
// the run's last iteration), which its next attempt continues, waits. It
// returns what it did, nil when nothing; the base's tip it followed or
// could not follow is not looked at again until the base moves.
func (b *Branch) MergeBase(ctx context.Context, cfg *config.Config, node, lastNode string, guards BaseGuards, outside func(func())) (*Followed, error) {
	f, own, unlock, err := b.lookBase(ctx, false, node, lastNode, outside)
	if f == nil || err != nil {
		return nil, err
	}
	defer unlock()
	if own {
		if !cfg.Git.FollowBase {
			b.seenBase = f.Tip // moved at the next run's start (StartFromBase)
		}
		return nil, nil
	}
	fmt.Fprintf(b.notices, "runner: %s is %s ahead of %s\n", inert.Line(b.base), commits(f.Ahead), b.main.branch)
	b.seenBase = f.Tip
	if !cfg.Git.FollowBase {
		f.Kind = FollowedBehind
		fmt.Fprintf(b.notices, "runner: git.follow_base = false: %s is not merged into %s (`runner finish` brings the run onto it)\n", inert.Line(b.base), b.main.branch)
		return f, nil
	}
	return f, b.mergeBase(ctx, cfg, f, guards, outside)
}

// lookBase looks at the base: nil when it did not move since it was
// last looked at, or holds nothing the run branch has not, or the
// working tree holds an attempt the next one continues (said once).
// Otherwise it returns the base's tip and how far it is ahead, whether
// the run branch has no work of its own (own), and, held, the lock of
// the run's integrations, which unlock gives up.
func (b *Branch) lookBase(ctx context.Context, first bool, node, lastNode string, outside func(func())) (f *Followed, own bool, unlock func(), err error) {
	main := b.Main()
	if main == nil || b.base == "" || b.base == main.branch {
		return nil, false, nil, nil
	}
	tip, err := main.repo.RefValue(ctx, git.BranchRef(b.base))
	if err != nil {
		return nil, false, nil, wrapFollow(err, b.base)
	}
	if tip == "" {
		if first {
			fmt.Fprintf(b.notices, "runner: the base of the run branch, %s, does not exist: the run does not follow it (git.base names another)\n", inert.Line(b.base))
		}
		return nil, false, nil, nil
	}
	if tip == b.seenBase {
		return nil, false, nil, nil
	}
	outside(func() { b.integ.Lock() })
	if f, own, err = b.lookLocked(ctx, tip, node, lastNode); f == nil || err != nil {
		b.integ.Unlock()
		return nil, false, nil, err
	}
	return f, own, b.integ.Unlock, nil
}

// lookLocked is lookBase's look at the base's tip, under the lock of
// the run's integrations.
func (b *Branch) lookLocked(ctx context.Context, tip, node, lastNode string) (*Followed, bool, error) {
	main := b.main
	if node != "" {
		if err := main.StartTask(ctx, node, lastNode); err != nil {
			return nil, false, err
		}
	}
	f := &Followed{Base: b.base, Tip: tip, Head: main.head}
	var err error
	if f.Ahead, err = main.repo.CountAhead(ctx, main.head, tip); err != nil || f.Ahead == 0 {
		b.seenBase = tip
		return nil, false, wrapFollow(err, b.base)
	}
	own, err := main.repo.IsAncestor(ctx, main.head, tip)
	if err != nil {
		return nil, false, wrapFollow(err, b.base)
	}
	if main.dirty != "" {
		if !b.waitSaid {
			b.waitSaid = true
			fmt.Fprintf(b.notices, "runner: %s is %s ahead of %s; it is taken in once the working tree holds no attempt the next one goes on from\n",
				inert.Line(b.base), commits(f.Ahead), main.branch)
		}
		return nil, false, nil
	}
	b.waitSaid = false
	return f, own, nil
}

// fastForward moves the run branch, which has no work of its own, and
// its working tree to the base's tip.
func (b *Branch) fastForward(ctx context.Context, f *Followed) error {
	main := b.main
	b.seenBase = f.Tip
	if err := b.holdResult(ctx, f.Tip); err != nil {
		return b.notFollowed(f, err)
	}
	if err := b.moveTo(ctx, f.Tip); err != nil {
		return err
	}
	f.Kind, f.Head = FollowedFastForward, f.Tip
	fmt.Fprintf(b.notices, "runner: the run branch %s has no task of its own yet: it starts from %s's tip %s (%s ahead)\n",
		main.branch, inert.Line(f.Base), Short(f.Tip), commits(f.Ahead))
	return nil
}

// mergeBase merges the base's tip into the run branch, runs guards on
// the result in the run branch's working tree, and moves the run branch
// there when they pass; a conflict or failing guards leave it where it
// was, and are said.
func (b *Branch) mergeBase(ctx context.Context, cfg *config.Config, f *Followed, guards BaseGuards, outside func(func())) error {
	main := b.main
	head := main.head
	m := git.Message{Subject: fmt.Sprintf("Merge %s into %s", f.Base, main.branch),
		Body: fmt.Sprintf("The run branch follows its base (git.follow_base): %s of %s taken in before the next task.", commits(f.Ahead), f.Base)}
	merge, err := main.repo.Merge(ctx, head, f.Tip, m)
	var conflict *git.ConflictError
	switch {
	case errors.As(err, &conflict):
		f.Kind, f.Files = FollowedConflict, conflict.Files
		fmt.Fprintf(b.notices, "runner: %s could not be merged into %s: conflict in %s; the run goes on from where it was, without %s's new commits, and follows %s again once it moves\n",
			inert.Line(f.Base), main.branch, inert.Line(strings.Join(conflict.Files, ", ")), inert.Line(f.Base), inert.Line(f.Base))
		return nil
	case err != nil && main.repo.CheckIntegrate() != nil:
		fmt.Fprintf(b.notices, "runner: %s is not merged into %s: %v\n", inert.Line(f.Base), main.branch, main.repo.CheckIntegrate())
		return nil
	case err != nil:
		return wrapFollow(err, f.Base)
	}
	if err := b.holdResult(ctx, merge); err != nil {
		return b.notFollowed(f, err)
	}
	if guards != nil && len(cfg.Guards) > 0 {
		logs := filepath.Join(b.p.StateDir(), "base")
		if err := fsutil.MkdirAll(logs, 0o755); err != nil {
			return err
		}
		fmt.Fprintf(b.notices, "runner: running the guards on %s merged into %s\n", inert.Line(f.Base), main.branch)
		var passed bool
		outside(func() { passed, err = guards(ctx, main.repo.Top(), logs, head, merge) })
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		if err != nil || !passed {
			if perr := b.dropResult(context.WithoutCancel(ctx)); perr != nil {
				return errors.Join(err, perr)
			}
			if err != nil {
				return err
			}
			f.Kind = FollowedGuards
			fmt.Fprintf(b.notices, "runner: the guards failed on %s merged into %s (their output is in %s); the run goes on from where it was, without %s's new commits, and follows %s again once it moves\n",
				inert.Line(f.Base), main.branch, b.p.Rel(filepath.Join(logs, "failure.log")), inert.Line(f.Base), inert.Line(f.Base))
			return nil
		}
	}
	if err := b.moveTo(ctx, merge); err != nil {
		return err
	}
	f.Kind, f.Head = FollowedMerge, merge
	fmt.Fprintf(b.notices, "runner: merged %s into %s before the next task: %s\n", inert.Line(f.Base), main.branch, Short(merge))
	return nil
}

// holdResult puts the run branch's working tree, at the run's head with
// nothing changed, at commit, marked as under way (followingRef).
func (b *Branch) holdResult(ctx context.Context, commit string) error {
	main := b.main
	if err := main.repo.UpdateRef(ctx, followingRef, commit, ""); err != nil {
		return wrapFollow(err, b.base)
	}
	if err := keepInTheWay(ctx, main.repo, main.head, commit, b.notices); err != nil {
		return err
	}
	if err := main.repo.Follow(ctx, main.head, commit); err != nil {
		// Nothing changed in the working tree: something in it is in the
		// way (a file git does not let the move replace).
		if derr := main.repo.DeleteRef(ctx, followingRef, commit); derr != nil || ctx.Err() != nil {
			return errors.Join(wrapFollow(err, b.base), derr, ctx.Err())
		}
		return &inTheWayError{err}
	}
	return nil
}

// inTheWayError is a move of the run branch's working tree to the base
// that something in it stopped, nothing changed.
type inTheWayError struct{ err error }

func (e *inTheWayError) Error() string { return e.err.Error() }

// notFollowed says that the base's tip could not be taken in, when err
// is an inTheWayError, and returns nil then: the run goes on from where
// it was; any other error is returned.
func (b *Branch) notFollowed(f *Followed, err error) error {
	var way *inTheWayError
	if !errors.As(err, &way) {
		return err
	}
	f.Kind = FollowedConflict
	fmt.Fprintf(b.notices, "runner: %s could not be taken into %s's working tree %s: %s; the run goes on from where it was, and follows %s again once it moves\n",
		inert.Line(f.Base), b.main.branch, b.main.repo.Top(), inert.Line(firstLine(way.err.Error())), inert.Line(f.Base))
	return nil
}

// dropResult puts the run branch's working tree back at the run's head
// from the result it held (and what guards left there).
func (b *Branch) dropResult(ctx context.Context) error {
	main := b.main
	if err := main.repo.ResetWorktree(ctx, main.head, main.runtime); err != nil {
		return fmt.Errorf("put %s back at the run branch's head %s: %w", main.repo.Top(), Short(main.head), err)
	}
	return main.repo.DeleteRef(ctx, followingRef, "")
}

// moveTo moves the run branch from the run's head to commit, which its
// working tree holds (holdResult), and records the checkpoint; what
// guards left in the working tree is undone.
func (b *Branch) moveTo(ctx context.Context, commit string) error {
	main := b.main
	if moved, err := b.Moved(ctx, 0); err != nil {
		return errors.Join(err, b.dropResult(ctx))
	} else if moved != nil {
		return errors.Join(fmt.Errorf("the run branch %s was moved by someone else while the base was taken in", main.branch), b.dropResult(ctx))
	}
	if err := main.repo.UpdateRef(ctx, git.BranchRef(main.branch), commit, main.head); err != nil {
		return errors.Join(wrapFollow(err, b.base), b.dropResult(ctx))
	}
	main.head = commit
	b.landed = commit
	b.hooks.Checkpoint(main.branch, commit)
	if changes, err := main.repo.Changes(ctx, main.runtime); err == nil && len(changes) > 0 {
		// What the guards left: the judged result is the commit.
		if err := main.repo.ResetWorktree(ctx, commit, main.runtime); err != nil {
			return fmt.Errorf("put %s at %s after the guards: %w", main.repo.Top(), Short(commit), err)
		}
	}
	return main.repo.DeleteRef(ctx, followingRef, "")
}

// recoverFollow puts the run branch's working tree back at the run
// branch's head when a runner died while it held the base's tip or a
// merge with it (followingRef), and forgets the mark. Nothing is lost:
// what it held is a commit of the runner's.
func (b *Branch) recoverFollow(ctx context.Context, t *Tree) error {
	held, err := t.repo.RefValue(ctx, followingRef)
	if err != nil || held == "" {
		return err
	}
	if held != t.head {
		if err := t.repo.ResetWorktree(ctx, t.head, t.runtime); err != nil {
			return fmt.Errorf("put %s back at the run branch's head %s after a follow of its base was cut short: %w", t.repo.Top(), Short(t.head), err)
		}
		fmt.Fprintf(b.notices, "runner: taking in the base was cut short by a runner that stopped; %s is put back at %s\n", t.repo.Top(), Short(t.head))
	}
	return t.repo.DeleteRef(ctx, followingRef, held)
}

// wrapFollow names the base in an error of following it; nil stays nil.
func wrapFollow(err error, base string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("follow the base %s: %w", base, err)
}

// commits is "1 commit", "3 commits".
func commits(n int) string {
	if n == 1 {
		return "1 commit"
	}
	return fmt.Sprintf("%d commits", n)
}
