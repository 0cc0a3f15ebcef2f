package runbranch

import (
	"context"
	"errors"
	"fmt"

	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/state"
)

// Landing (SPEC §14): once a task's commit is on the run branch, the run
// branch's working tree (the checkout, or its worktree) and the slot the
// task was worked in are brought to it. Neither holds work of its own
// (agents work in the slots), and the runner knows what each holds: the
// checkout the previous head, the slot the task's snapshot or, once the
// guards ran on the integrated result, that result. So each moves by the
// paths that differ (git.Follow, git.ResetFromSnapshot), not by the full
// scan of every file a reset from an unknown state needs; that scan is
// the fallback when a move finds a change in its way, and what undoes
// whatever the guards left in a slot, out of the run's lock (Clean).

// landing is what Integrate did for an iteration in a slot: the commit
// on the run branch its task became, and the head it was replayed onto.
// The record of the iteration (commitTask) takes them from here rather
// than from git.
type landing struct {
	iteration    int
	commit, onto string
}

// landAll brings the run branch's working tree and the slot at work to
// commit, the run branch's head, from whatever they hold: what a runner
// resuming an iteration whose task landed does.
func (ck *Tree) landAll(ctx context.Context, commit string) error {
	if err := ck.b.keepMainTree(ctx, commit, errNotAtHead); err != nil {
		return err
	}
	if err := ck.b.resetMainTree(ctx, commit); err != nil {
		return err
	}
	return ck.restart(ctx, commit)
}

// errNotAtHead is why a working tree is reset as a whole: the runner does
// not know it to be at the run's head (it held changes when the run
// began, or a runner died while moving it).
var errNotAtHead = errors.New("the checkout was not known to be at the run's head")

// follow brings the run branch's working tree from the run's
// head to commit, the run branch's new head, and records the checkpoint.
// Changes made there meanwhile (agents work in the slots, so someone
// else's) stay where the move writes nothing. One on a path it writes
// stops the move: what the working tree holds is then kept under
// refs/runner/kept/ before it is reset to commit as a whole. A working
// tree not known to be at the head is reset as a whole.
func (b *Branch) follow(ctx context.Context, commit string) error {
	main := b.main
	if main.dirty == "" {
		if err := keepInTheWay(ctx, main.repo, main.head, commit, b.notices); err != nil {
			return err
		}
		err := main.repo.Follow(ctx, main.head, commit)
		if err == nil {
			main.head = commit
			b.hooks.Checkpoint(main.branch, commit)
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := b.keepMainTree(ctx, commit, err); err != nil {
			return err
		}
	} else if err := b.keepMainTree(ctx, commit, errNotAtHead); err != nil {
		return err
	}
	return b.resetMainTree(ctx, commit)
}

// keepMainTree keeps what the run branch's working tree holds beyond
// the run's head, which the move to commit met in its way (why), as a
// commit under refs/runner/kept/<commit>, and says so.
func (b *Branch) keepMainTree(ctx context.Context, commit string, why error) error {
	main := b.main
	m := git.Message{Subject: "changes found in the checkout while tasks landed",
		Body: fmt.Sprintf("The run branch moved to %s, which writes where these changes were.", commit)}
	k, err := keepChanges(ctx, main, commit, m, b.lagsBehind(ctx))
	if err != nil || k == nil {
		return wrapKeep(err, main, "before it follows the run branch")
	}
	where := "where the run branch's new head " + Short(commit) + " writes"
	if errors.Is(why, errNotAtHead) {
		where = "from before this run, which the run branch's new head " + Short(commit) + " replaces"
	}
	b.log.Warn("the checkout held changes; they are kept, and the checkout follows the run branch",
		"dir", main.repo.Top(), "kept", k.ref, "commit", Short(k.commit), "files", k.files, "met", why)
	fmt.Fprintf(b.notices, "runner: %s held changes of its own (%d files) %s; they are kept under %s (git diff %s %s)\n",
		main.repo.Top(), k.files, where, k.ref, Short(main.head), k.ref)
	return nil
}

// lagsBehind reports whether a tree the run branch's working tree holds
// is the run's head's parent: a runner died after moving the run branch
// and before bringing the working tree along, which holds nothing of
// anyone's then.
func (b *Branch) lagsBehind(ctx context.Context) func(tree string) (bool, error) {
	return func(tree string) (bool, error) {
		parent, err := b.main.repo.TreeOf(ctx, b.main.head+"^")
		if errors.Is(err, git.ErrNotFound) {
			return false, nil
		}
		return parent == tree, err
	}
}

// resetMainTree puts the run branch's working tree at commit as a
// whole (git.ResetWorktree) and records the checkpoint.
func (b *Branch) resetMainTree(ctx context.Context, commit string) error {
	main := b.main
	if err := keepInTheWay(ctx, main.repo, main.head, commit, b.notices); err != nil {
		return err
	}
	if err := main.repo.ResetWorktree(ctx, commit, main.runtime); err != nil {
		return fmt.Errorf("bring %s to the run branch's new checkpoint %s: %w", main.repo.Top(), Short(commit), err)
	}
	main.head, main.dirty = commit, ""
	b.hooks.Checkpoint(main.branch, commit)
	return nil
}

// slotLanded puts the slot at work at commit, its task's commit on the run
// branch, from what its files hold: with guarded, the integrated result
// commit and what the guards left (undone by Clean, out of the lock);
// else snap, the task's work, which is commit itself when the run branch
// had not moved (task == commit). Failing that, restart.
func (ck *Tree) slotLanded(ctx context.Context, snap git.Snapshot, task, commit string, guarded bool) error {
	var err error
	switch {
	case guarded:
		// HEAD is moved with the reset that undoes what the guards left
		// (Clean, or Move and Tidy when it does not run);
		// until then the slot shows changes, which a runner started
		// after a crash resets.
	case task == commit:
		// The snapshot's index becomes the slot's; HEAD moves from the
		// checkpoint, unless the agent moved it (it committed).
		err = ck.repo.AdvanceHead(ctx, snap, commit, ck.head)
	default:
		if err = ck.repo.ResetFromSnapshot(ctx, snap, commit, ck.runtime); err == nil {
			err = ck.repo.DetachAt(ctx, commit)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return ck.restart(ctx, commit)
	}
	ck.head, ck.dirty, ck.leftovers = commit, "", guarded
	return nil
}

// restart puts the slot at work at commit, with nothing left of its
// task, from whatever its worktree holds: the next task starts there.
func (ck *Tree) restart(ctx context.Context, commit string) error {
	if err := ck.repo.StartDetachedAt(ctx, commit, ck.runtime); err != nil {
		return fmt.Errorf("slot %d: put its worktree at %s: %w", ck.slot, Short(commit), err)
	}
	ck.head, ck.dirty, ck.leftovers = commit, "", false
	return nil
}

// Clean undoes what the guards left in the slot (ck.leftovers) after its
// iteration, without the run's lock (outside): the other slots go on
// meanwhile. Nobody else uses a busy slot's worktree. When it cannot,
// the slot is marked as holding what no task goes on from, which Move or
// Tidy resets.
func (ck *Tree) Clean(ctx context.Context, outside func(func())) {
	if !ck.leftovers || ctx.Err() != nil {
		return
	}
	repo, head, runtime := ck.repo, ck.head, ck.runtime
	var err error
	outside(func() { err = repo.StartDetachedAt(ctx, head, runtime) })
	ck.leftovers = false
	if err != nil {
		ck.dirty = "?"
		ck.b.log.Warn("a slot could not be put back at its checkpoint after the guards; it is reset before its next task", "slot", ck.slot, "err", err)
	}
}

// recordLanded puts in meta the checkpoint of a slot's task whose commit
// is on the run branch, replayed onto parent. When this runner landed it
// (Integrate), the checkout and the slot are at it already. Otherwise a
// runner that died before it recorded the task had not brought them
// along, and the run branch may have moved on since, by other slots'
// tasks: they go to its tip. The checkout may lag behind the run branch
// although the run's head is its tip: a runner that died between moving
// the branch and bringing the checkout along, read by this one at start
// (the checkout then had changes, main.dirty).
func (ck *Tree) recordLanded(ctx context.Context, meta *state.Meta, commit, parent string) error {
	main := ck.b.main
	stat, _ := ck.repo.DiffStat(ctx, parent, commit)
	meta.Checkpoint = &state.CheckpointMeta{Commit: commit, Parent: parent, Branch: ck.branch, Diffstat: stat}
	if ck.landed.iteration == meta.Iteration {
		return nil
	}
	tip, err := ck.repo.RefValue(ctx, git.BranchRef(ck.branch))
	if err != nil {
		return fmt.Errorf("commit task %s: %w", meta.Node, err)
	}
	if tip != main.head || main.dirty != "" {
		return ck.landAll(ctx, tip)
	}
	if ck.head != tip || ck.dirty != "" || ck.leftovers {
		return ck.restart(ctx, tip)
	}
	return nil
}
