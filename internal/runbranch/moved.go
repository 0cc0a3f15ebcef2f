package runbranch

import (
	"context"
	"fmt"
	"strconv"
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

// Moved checks that the run branch is where the runner last put
// it (the run's head). When it is not, it is put back there, what it
// pointed at is kept under refs/runner/foreign/<iteration>-<time>, and
// the change is returned, for iteration n's tamper list; nil when the
// branch was not moved. Without git checkpoints there is no run branch.
func (b *Branch) Moved(ctx context.Context, n int) (*state.TamperMeta, error) {
	main := b.Main()
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
			return nil, fmt.Errorf("put the deleted run branch %s back at %s: %w", main.branch, Short(main.head), err)
		}
	} else {
		kept, err := main.repo.PutBack(ctx, ref, main.head, cur, fmt.Sprintf("%d-%d", n, time.Now().UnixNano()))
		if err != nil {
			return nil, fmt.Errorf("the run branch %s was moved to %s by someone else: %w", main.branch, Short(cur), err)
		}
		change.Kept = kept
	}
	b.log.Warn("the run branch was moved, not by the runner; it is put back", "branch", main.branch, "found", Short(cur), "head", Short(main.head), "kept", change.Kept)
	if cur == "" {
		fmt.Fprintf(b.notices, "runner: the run branch %s was deleted, not by the runner (iteration %d); it is put back at %s\n", main.branch, n, Short(main.head))
	} else {
		fmt.Fprintf(b.notices, "runner: the run branch %s pointed at %s, not put there by the runner (iteration %d); it is put back at %s, and %s is kept under %s\n",
			main.branch, Short(cur), n, Short(main.head), Short(cur), change.Kept)
	}
	return &change, nil
}

// WithMoved adds to tamper the run branch, when someone else moved it
// (Moved).
func (b *Branch) WithMoved(ctx context.Context, n int, tamper []state.TamperMeta) ([]state.TamperMeta, error) {
	moved, err := b.Moved(ctx, n)
	if err != nil || moved == nil {
		return tamper, err
	}
	return append(tamper, *moved), nil
}

// TaskLanded reports whether the commit of meta's task, made by this
// iteration, is on the run branch: the runner acted on the verdict before
// it died (the commit moves the branch by compare-and-swap from the head
// it recorded), so the verdict is its own, and judging again could only
// contradict a commit that stays.
func (b *Branch) TaskLanded(ctx context.Context, meta *state.Meta) bool {
	if b.Main() == nil {
		return false
	}
	trailers := map[string]string{git.TrailerNode: meta.Node, git.TrailerIteration: strconv.Itoa(meta.Iteration)}
	found, err := b.main.repo.FindByTrailers(ctx, git.BranchRef(b.main.branch), 20, trailers)
	return err == nil && found != ""
}
