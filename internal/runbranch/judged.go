package runbranch

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/state"
)

// The judged tree (SPEC §20): before the guards run, what the agent left
// is taken as a git tree (meta.JudgedTree). The guards and the reviewer
// judge it, and the task's commit is that tree, never what the working
// tree holds after them (they run the agent's code). Work git cannot
// take in time (git.timeout) fails its attempt, naming the largest
// paths, and is discarded: an agent's output never stops the run.

// snapshotGuard names the failed result of work git could not take.
const snapshotGuard = "snapshot"

// TakeJudged takes the working tree as the judged tree of meta's
// iteration. It reports false when git could not do it in time: the
// attempt then fails (meta.Guard, meta.Guards and failure.log say why,
// naming the largest paths) and the working tree is to be discarded
// (ck.unsnappable). Without git checkpoints there is nothing to take.
func (ck *Tree) TakeJudged(ctx context.Context, cfg *config.Config, meta *state.Meta) (bool, error) {
	if ck == nil {
		return true, nil
	}
	snap, err := ck.repo.Snapshot(ctx, ck.head, ck.runtime)
	if err == nil {
		meta.JudgedTree = snap.Tree
		meta.NoChange = len(snap.Paths) == 0
		return true, nil
	}
	if ctx.Err() != nil || !errors.Is(err, git.ErrTimeout) {
		return false, fmt.Errorf("take the work of iteration %d as a tree: %w", meta.Iteration, err)
	}
	return false, ck.failUnsnappable(ctx, cfg, meta, err)
}

// judgedSnapshot takes the working tree as a tree for the task's commit:
// the judged tree. When the working tree no longer holds it (the
// guards or the reviewer changed it, or left what git cannot take in
// time), it is put back at the judged tree first, what they left kept
// under refs/runner/kept/guards-<n> where git could take it.
func (ck *Tree) judgedSnapshot(ctx context.Context, cfg *config.Config, meta *state.Meta) (git.Snapshot, error) {
	snap, err := ck.repo.Snapshot(ctx, ck.head, ck.runtime)
	timedOut := errors.Is(err, git.ErrTimeout) && ctx.Err() == nil
	if meta.JudgedTree == "" || err == nil && snap.Tree == meta.JudgedTree || err != nil && !timedOut {
		return snap, err
	}
	var changed []string
	if !timedOut {
		changed, _ = ck.repo.ChangedPaths(ctx, meta.JudgedTree, snap.Tree)
		m := git.Message{Subject: fmt.Sprintf("what the judges of iteration %d left in the working tree", meta.Iteration),
			Body: "Task " + meta.Node + "'s commit is the tree its guards judged; this is the working tree after them."}
		if k, err := ck.repo.Keep(ctx, fmt.Sprintf("guards-%d", meta.Iteration), snap.Tree, ck.head, m); err == nil {
			meta.Note = strings.TrimSpace(meta.Note + " the guards changed the work after it was judged: what was judged lands, what they left is kept under " + git.KeptPrefix + fmt.Sprintf("guards-%d", meta.Iteration) + " (" + Short(k) + ")")
		}
	} else {
		meta.Note = strings.TrimSpace(meta.Note + " the guards left what git cannot take in time: discarded, what was judged lands")
	}
	judged, err := ck.repo.Commit(ctx, meta.JudgedTree, ck.head, git.Message{Subject: fmt.Sprintf("the judged tree of iteration %d", meta.Iteration)})
	if err != nil {
		return git.Snapshot{}, err
	}
	if timedOut {
		err = ck.repo.DiscardWork(ctx, judged, ck.runtime)
	} else {
		err = ck.repo.ResetWorktree(ctx, judged, ck.runtime)
	}
	if err != nil {
		return git.Snapshot{}, fmt.Errorf("put %s back at the judged tree of iteration %d: %w", ck.repo.Top(), meta.Iteration, err)
	}
	ck.b.warnChangedAfterJudged(cfg, meta, changed)
	return ck.repo.Snapshot(ctx, ck.head, ck.runtime)
}
