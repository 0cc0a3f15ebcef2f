package runbranch

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/runner-cli/runner/internal/config"
)

// Parallel slots (SPEC §14): with loop.parallel = N above 1, up to N
// tasks are worked on at once, each in a slot: a linked worktree beside
// the checkout, its HEAD detached at the run branch's checkpoint the task
// started from, reused from task to task.

// Slot opens the worktree of slot id: created beside the checkout
// (git.DefaultWorktreePath), detached at the run branch's checkpoint,
// with git.setup run once when it is created.
func (b *Branch) Slot(ctx context.Context, cfg *config.Config, id int) (*Tree, error) {
	main := b.main
	path, err := b.SlotPath(id)
	if err != nil {
		return nil, fmt.Errorf("slot %d: %w", id, err)
	}
	wt, created, err := main.repo.DetachedWorktree(ctx, path, main.head)
	if err != nil {
		return nil, fmt.Errorf("slot %d: the worktree at %s: %w", id, path, err)
	}
	if created {
		fmt.Fprintf(b.notices, "runner: slot %d works in the worktree %s\n", id, path)
	}
	log := filepath.Join(b.p.StateDir(), "setup-slot-"+strconv.Itoa(id)+".log")
	room, done := b.hooks.Setup(path, id)
	defer done()
	if ran, err := wt.RunSetup(ctx, cfg.Git.Setup, log, cfg.Git.SetupTimeout.Duration, room); err != nil {
		return nil, fmt.Errorf("git.setup in %s (its output is in %s): %w", path, b.p.Rel(log), err)
	} else if ran {
		fmt.Fprintf(b.notices, "runner: ran git.setup in slot %d's worktree (output in %s)\n", id, b.p.Rel(log))
	}
	head, err := wt.HeadCommit(ctx)
	if err != nil {
		return nil, fmt.Errorf("slot %d: %w", id, err)
	}
	ck := &Tree{b: b, slot: id, repo: wt, branch: main.branch, head: head, runtime: main.runtime}
	changes, err := wt.Changes(ctx, ck.runtime)
	if err != nil {
		return nil, fmt.Errorf("slot %d: %w", id, err)
	}
	if len(changes) > 0 {
		ck.dirty = "?" // a previous run's attempt, kept under its attempt ref when it was recorded
	}
	return ck, nil
}

// SlotPath is where the worktree of slot id is.
func (b *Branch) SlotPath(id int) (string, error) {
	return b.main.repo.DefaultWorktreePath(b.main.branch + "-slot-" + strconv.Itoa(id))
}

// Holds reports whether the slot holds task node's last attempt, which
// its next one continues.
func (ck *Tree) Holds(node string) bool { return ck.dirty == node }

// Unknown marks the slot as holding what no task goes on from: it is
// reset as a whole before its next task.
func (ck *Tree) Unknown() { ck.dirty = "?" }

// Move plans how the slot gets to the run branch's checkpoint before
// task node, unless it holds the same task's last attempt, which the
// next one continues; whatever it held is kept under its attempt ref
// already. The slot's fields say at once where it will be; the move
// itself is returned (nil: none), for the slot's goroutine to make
// without the run's lock: nobody else uses a busy slot's worktree. A
// slot known to be at its checkpoint, nothing changed since, moves by the
// paths that differ; one that is not, or has a change in the way, is
// reset as a whole.
func (ck *Tree) Move(node string) func(context.Context) error {
	if ck.dirty == node && ck.head != "" {
		return nil
	}
	to := ck.b.main.head
	known := ck.dirty == "" && !ck.leftovers
	if known && ck.head == to {
		return nil
	}
	repo, from, runtime, id := ck.repo, ck.head, ck.runtime, ck.slot
	ck.head, ck.dirty, ck.leftovers = to, "", false
	return func(ctx context.Context) error {
		if known {
			err := repo.MoveDetached(ctx, from, to)
			if err == nil || ctx.Err() != nil {
				return err
			}
		}
		if err := repo.StartDetachedAt(ctx, to, runtime); err != nil {
			return fmt.Errorf("slot %d: put its worktree at the checkpoint %s before task %s: %w", id, Short(to), node, err)
		}
		return nil
	}
}

// Tidy puts a free slot that holds what no task goes on from (a
// conflicted attempt, or what a previous run left, each kept under its
// attempt ref) at the run branch's checkpoint, so that a run does not
// end with a worktree holding changes. A slot holding a task's failed
// attempt is left for the next attempt to go on from, as the checkout is
// without slots.
func (ck *Tree) Tidy(ctx context.Context) error {
	if ck.dirty != "?" && !ck.leftovers {
		return nil
	}
	head := ck.b.main.head
	if err := ck.repo.StartDetachedAt(ctx, head, ck.runtime); err != nil {
		return fmt.Errorf("slot %d: put its worktree at the checkpoint %s: %w", ck.slot, Short(head), err)
	}
	ck.head, ck.dirty, ck.leftovers = head, "", false
	return nil
}

// Landed is where the last landing of this run moved the run branch; ""
// when none did.
func (b *Branch) Landed() string {
	if b == nil {
		return ""
	}
	return b.landed
}
