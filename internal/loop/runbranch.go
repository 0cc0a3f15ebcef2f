package loop

import (
	"context"
	"fmt"
	"time"

	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/state"
)

// The run branch moves only by compare-and-swap from the head the runner
// recorded (SPEC §20): a task's commit, an integration. An agent that
// commits on it, its code run by the guards, or a slot's agent that
// points it at a commit of its own dressed as a task's, moved it behind
// the runner's back: it is put back, and what it pointed at is kept under
// refs/runner/foreign/, never built on.

// movedBranchChange is the change a tamper entry names for a run branch
// someone else moved.
const movedBranchChange = "moved"

// runBranchMoved checks that the run branch is where the runner last put
// it (the run's head). When it is not, it is put back there, what it
// pointed at is kept under refs/runner/foreign/<iteration>-<time>, and
// the change is returned, for iteration n's tamper list; nil when the
// branch was not moved. Without git checkpoints there is no run branch.
func (r *worker) runBranchMoved(ctx context.Context, n int) (*state.TamperMeta, error) {
	main := r.main
	if main == nil || main.head == "" {
		return nil, nil
	}
	// Also after an interrupt: the check is part of recording what ran.
	ctx = context.WithoutCancel(ctx)
	ref := git.BranchRef(main.branch)
	cur, err := main.repo.RefValue(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("check the run branch %s: %w", main.branch, err)
	}
	if cur == main.head {
		return nil, nil
	}
	change := state.TamperMeta{Path: ref, Change: movedBranchChange}
	if cur == "" {
		change.Change = "deleted"
		if err := main.repo.UpdateRef(ctx, ref, main.head, ""); err != nil {
			return nil, fmt.Errorf("put the deleted run branch %s back at %s: %w", main.branch, short(main.head), err)
		}
	} else {
		kept, err := main.repo.PutBack(ctx, ref, main.head, cur, fmt.Sprintf("%d-%d", n, time.Now().UnixNano()))
		if err != nil {
			return nil, fmt.Errorf("the run branch %s was moved to %s by someone else: %w", main.branch, short(cur), err)
		}
		change.Kept = kept
	}
	r.log.Warn("the run branch was moved, not by the runner; it is put back", "branch", main.branch, "found", short(cur), "head", short(main.head), "kept", change.Kept)
	if cur == "" {
		fmt.Fprintf(r.opts.Notices, "runner: the run branch %s was deleted, not by the runner (iteration %d); it is put back at %s\n", main.branch, n, short(main.head))
	} else {
		fmt.Fprintf(r.opts.Notices, "runner: the run branch %s pointed at %s, not put there by the runner (iteration %d); it is put back at %s, and %s is kept under %s\n",
			main.branch, short(cur), n, short(main.head), short(cur), change.Kept)
	}
	return &change, nil
}

// withRunBranch adds to tamper the run branch, when someone else moved it
// (runBranchMoved).
func (r *worker) withRunBranch(ctx context.Context, n int, tamper []state.TamperMeta) ([]state.TamperMeta, error) {
	moved, err := r.runBranchMoved(ctx, n)
	if err != nil || moved == nil {
		return tamper, err
	}
	return append(tamper, *moved), nil
}
