package runbranch

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
)

// A finished task's commit (SPEC §12, §20): the judged tree, one commit on
// the run branch, made exactly once, the branch moved by compare-and-swap
// from the head the runner recorded.

// commitTask makes the commit of a finished task, exactly once: a commit
// with its trailers already on the run branch (made by a runner that died
// before recording it) is taken as it is.
func (ck *Tree) commitTask(ctx context.Context, cfg *config.Config, meta *state.Meta, title string) error {
	main := ck.b.main
	if ck.slot > 0 && ck.landed.iteration == meta.Iteration {
		// Integrated by this runner, the checkout and the slot brought
		// along (integrate.go, land.go).
		return ck.recordLanded(ctx, meta, ck.landed.commit, ck.landed.onto)
	}
	trailers := map[string]string{git.TrailerNode: meta.Node, git.TrailerIteration: strconv.Itoa(meta.Iteration)}
	found, err := ck.repo.FindByTrailers(ctx, git.BranchRef(ck.branch), 20, trailers)
	if err != nil {
		return fmt.Errorf("commit task %s: %w", meta.Node, err)
	}
	commit, parent := found, ck.head
	if ck.slot > 0 && found == "" {
		// In a slot, the task's commit is made and brought onto the run
		// branch by integrate, before the outcome is recorded: none was
		// needed, the slot holding nothing new.
		meta.Note = strings.TrimSpace(meta.Note + " no change to commit")
		return ck.restart(ctx, main.head)
	}
	if found == "" {
		snap, err := ck.judgedSnapshot(ctx, cfg, meta)
		if err != nil {
			return fmt.Errorf("commit task %s: %w", meta.Node, err)
		}
		if commit, err = ck.commitSnapshot(ctx, meta, title, snap); err != nil || commit == "" {
			return err
		}
	} else if p, err := ck.repo.ResolveCommit(ctx, found+"^"); err == nil {
		parent = p
	}
	if ck.slot > 0 {
		return ck.recordLanded(ctx, meta, commit, parent)
	}
	stat, _ := ck.repo.DiffStat(ctx, parent, commit)
	meta.Checkpoint = &state.CheckpointMeta{Commit: commit, Parent: parent, Branch: ck.branch, Diffstat: stat}
	ck.head, ck.dirty = commit, ""
	ck.b.hooks.Checkpoint(ck.branch, commit)
	ck.b.hooks.Landed(meta, parent, commit, ck.b.p.RunDir(meta.Iteration))
	return nil
}

// commitSnapshot commits snap, the working tree as the judged tree, as
// task meta's commit on the run branch, and returns it; "" when it holds
// no change.
func (ck *Tree) commitSnapshot(ctx context.Context, meta *state.Meta, title string, snap git.Snapshot) (string, error) {
	if len(snap.Paths) == 0 {
		meta.Note = strings.TrimSpace(meta.Note + " no change to commit")
		ck.dirty = ""
		return "", nil
	}
	commit, err := ck.repo.CommitSnapshot(ctx, snap, taskMessage(meta, title))
	if err != nil {
		return "", fmt.Errorf("commit task %s: %w", meta.Node, err)
	}
	fsutil.FailAt(fsutil.FailGit, "commit")
	// The branch is at the checkpoint: one moved by someone else since
	// the agent and the guards were checked is put back first, what it
	// pointed at kept (moved.go).
	if err := ck.b.putBack(ctx, meta); err != nil {
		return "", err
	}
	if err := ck.repo.AdvanceHead(ctx, snap, commit, ck.head); err != nil {
		return "", fmt.Errorf("commit task %s: %w", meta.Node, err)
	}
	fsutil.FailAt(fsutil.FailGit, "advance")
	return commit, nil
}

// putBack puts the run branch back where the runner left it, if someone
// else moved it since the agent and the guards were checked (moved.go),
// before a task's commit moves it.
func (b *Branch) putBack(ctx context.Context, meta *state.Meta) error {
	moved, err := b.Moved(ctx, meta.Iteration)
	if err != nil {
		return fmt.Errorf("commit task %s: %w", meta.Node, err)
	}
	if moved != nil {
		meta.Note = strings.TrimSpace(meta.Note + " the run branch was found moved by someone else before this task's commit: put back, kept under " + moved.Kept)
	}
	return nil
}

// taskMessage is the commit message of meta's task: its title, the
// agent's summary, and the trailers that find it again.
func taskMessage(meta *state.Meta, title string) git.Message {
	return git.Message{Subject: fmt.Sprintf("%s (%s)", subjectOf(title), meta.Node), Body: meta.Summary,
		Trailers: git.NodeTrailers(meta.Node, meta.Iteration)}
}

// subjectOf is a task's title on one bounded line, for its commit.
func subjectOf(title string) string {
	if title == "" {
		return "task"
	}
	return textfmt.OneLine(title, 72)
}
