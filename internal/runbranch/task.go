package runbranch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// StartTask puts the working tree back to the last checkpoint before an
// iteration on node, when it holds another task's failed attempt (kept
// under its attempt ref): no task starts on another's leftovers. The
// next attempt at the same task starts from its own; lastNode is the
// task of the run's last recorded iteration, whose work unknown changes
// are taken to be.
func (ck *Tree) StartTask(ctx context.Context, node, lastNode string) error {
	if ck == nil || ck.dirty == "" || ck.dirty == node {
		return nil
	}
	if ck.dirty == "?" && lastNode == node {
		ck.dirty = node // the same task goes on from where it was left
		return nil
	}
	if ck.dirty == "?" {
		// Found when the run began: no attempt's ref holds it (a person's
		// work, an abandoned iteration's), so it is kept before the reset.
		if err := ck.keepStartTree(ctx, node); err != nil {
			return err
		}
	}
	if err := ck.repo.ResetWorktree(ctx, ck.head, ck.runtime); err != nil {
		return fmt.Errorf("put the working tree back to the checkpoint %s before task %s: %w", Short(ck.head), node, err)
	}
	ck.dirty = ""
	return nil
}

// keepStartTree keeps what the working tree held when the run began,
// beyond the checkpoint, as a commit under refs/runner/kept/, before task
// node starts on the checkpoint, and says so.
func (ck *Tree) keepStartTree(ctx context.Context, node string) error {
	m := git.Message{Subject: "changes found in the working tree when the run began",
		Body: fmt.Sprintf("Task %s starts on the checkpoint %s, which these changes were made on.", node, ck.head)}
	k, err := keepChanges(ctx, ck, fmt.Sprintf("%s-%d", ck.head, time.Now().UnixNano()), m, nil)
	if err != nil || k == nil {
		return wrapKeep(err, ck, "before task "+node+" starts")
	}
	ck.b.log.Warn("the working tree held changes from before this run; they are kept, and the next task starts on the checkpoint",
		"dir", ck.repo.Top(), "kept", k.ref, "commit", Short(k.commit), "files", k.files)
	fmt.Fprintf(ck.b.notices, "runner: %s held changes from before this run (%d files); they are kept under %s (git diff %s %s), and task %s starts on the checkpoint\n",
		ck.repo.Top(), k.files, k.ref, Short(ck.head), k.ref, node)
	return nil
}

// kept is what keepChanges kept: the commit, its ref, and how many files
// it holds beyond the checkpoint.
type kept struct {
	commit, ref string
	files       int
}

// keepChanges keeps what ck's working tree holds beyond its checkpoint as
// a commit under refs/runner/kept/<name>, unless it holds nothing or skip
// (when not nil) says the tree it holds needs no keeping. nil: nothing
// kept.
func keepChanges(ctx context.Context, ck *Tree, name string, m git.Message, skip func(tree string) (bool, error)) (*kept, error) {
	snap, err := ck.repo.Snapshot(ctx, ck.head, ck.runtime)
	if err != nil || len(snap.Paths) == 0 {
		return nil, err
	}
	if skip != nil {
		if no, err := skip(snap.Tree); err != nil || no {
			return nil, err
		}
	}
	c, err := ck.repo.Keep(ctx, name, snap.Tree, ck.head, m)
	if err != nil {
		return nil, err
	}
	return &kept{commit: c, ref: git.KeptPrefix + name, files: len(snap.Paths)}, nil
}

// wrapKeep names the working tree and the moment in an error of
// keepChanges; nil stays nil.
func wrapKeep(err error, ck *Tree, when string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("keep the changes in %s %s: %w", ck.repo.Top(), when, err)
}

// Record records a decided outcome in git, before the ledger records
// it: a finished task's changes become one commit on the run branch
// (found again by its trailers when a crash came after it, so it is made
// once), a failed attempt's are kept under its attempt ref, and the
// working tree goes back to the checkpoint when the task became blocked.
// What it did goes into meta (Checkpoint, AttemptRef).
func (ck *Tree) Record(ctx context.Context, cfg *config.Config, meta *state.Meta, title string) error {
	if meta.Outcome == state.OutcomeDone {
		return ck.commitTask(ctx, cfg, meta, title)
	}
	if ck.unsnappable {
		return ck.discardUnsnappable(ctx, meta)
	}
	snap, err := ck.repo.Snapshot(ctx, ck.head, ck.runtime)
	if errors.Is(err, git.ErrTimeout) && ctx.Err() == nil {
		// Work git cannot take in time is not kept: it would stop every
		// later run at this same step.
		meta.Note = strings.TrimSpace(meta.Note + " its work was too large to keep (git.timeout); discarded")
		fmt.Fprintf(ck.b.notices, "runner: the work of iteration %d is too large for git to keep within git.timeout (%s); it is discarded\n", meta.Iteration, cfg.Git.Timeout.Duration)
		return ck.discardUnsnappable(ctx, meta)
	}
	if err != nil {
		return fmt.Errorf("keep the attempt of iteration %d: %w", meta.Iteration, err)
	}
	if len(snap.Paths) > 0 {
		m := git.Message{Subject: fmt.Sprintf("attempt %d at %s (%s)", meta.Attempt, meta.Node, meta.Outcome),
			Body: meta.Summary, Trailers: git.NodeTrailers(meta.Node, meta.Iteration)}
		if _, err := ck.repo.SaveAttempt(ctx, meta.Iteration, snap.Tree, ck.head, m); err != nil {
			return fmt.Errorf("keep the attempt of iteration %d: %w", meta.Iteration, err)
		}
		meta.AttemptRef = git.AttemptRef(meta.Iteration)
		ck.dirty = meta.Node
		if meta.Conflict != nil {
			ck.dirty = "?" // the next attempt starts from the new checkpoint
		}
	}
	if meta.NodeStatus == string(tree.StatusBlocked) || meta.NodeStatus == "" {
		// Blocked, or removed: nothing goes on from this attempt.
		if len(snap.Paths) > 0 {
			if err := ck.repo.ResetWorktree(ctx, ck.head, ck.runtime); err != nil {
				return fmt.Errorf("put the working tree back to the checkpoint after iteration %d: %w", meta.Iteration, err)
			}
		}
		ck.dirty = ""
	}
	return nil
}
