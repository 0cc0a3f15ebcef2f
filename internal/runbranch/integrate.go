package runbranch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
)

// Integration (SPEC §14): a task finished in a slot (its agent said done,
// its guards passed there, its reviewer approved) becomes one commit on
// the slot's checkpoint, which is then replayed onto the run branch's
// latest checkpoint (git.Integrate, a rebase of one commit: the run
// branch's history stays linear). When the run branch moved since the
// task started, the guards run again on the result, in the slot, before
// the run branch moves: the run branch always passes its guards. One
// task is integrated at a time. Once the run branch moved, the checkout
// and the slot are brought to its new head (land.go).
//
// A conflict, or guards that fail only on the result, fail the attempt
// like a failing guard (+1 attempt: a task that conflicts every time is
// blocked after its max_attempts), with what happened in failure.log and
// so in the next attempt's failure.md, meta.json's conflict and the
// journal's conflict record; the next attempt starts from the new
// checkpoint. Its work is kept under its attempt ref.
//
// Crash safety: nothing of an integration is recorded before the run
// branch moves, and the commit on it carries the task's trailers, so a
// runner resuming the iteration finds it there (commitTask) or integrates
// again, which gives the same result.

// integrationGuard names the integration in failure.log and progress.
const integrationGuard = "integration"

// Guards runs the guards on a task's work brought onto the run branch:
// in the slot, with their logs in dir, the task brought onto head. It
// reports whether they passed.
type Guards func(ctx context.Context, dir, head string) (bool, error)

// Integrate brings the finished task of the slot ck onto the run branch,
// running guards on the result when the run branch moved since the task
// started; what it does is said on out (the slot's progress output), and
// outside runs a wait without the run's lock. It returns nil
// both when the task landed and when it could not (meta.Conflict says
// so, failure.log why); an error is a failure of the runner's own.
func (ck *Tree) Integrate(ctx context.Context, cfg *config.Config, meta *state.Meta, title string, out io.Writer, guards Guards, outside func(func())) error {
	b := ck.b
	if ck.begun != meta.Iteration {
		// Resumed: a runner that died after moving the run branch made the
		// commit already. One that began the iteration has not.
		if found, err := ck.integrated(ctx, meta); err != nil || found != "" {
			return err
		}
	}
	outside(func() { b.integ.Lock() })
	defer b.integ.Unlock()
	snap, err := ck.judgedSnapshot(ctx, cfg, meta)
	if err != nil {
		return fmt.Errorf("integrate task %s: %w", meta.Node, err)
	}
	if len(snap.Paths) == 0 {
		return nil // nothing to bring: recorded done with no commit (commitTask)
	}
	m := taskMessage(meta, title)
	task, err := ck.repo.CommitSnapshot(ctx, snap, m)
	if err != nil {
		return fmt.Errorf("integrate task %s: %w", meta.Node, err)
	}
	ref := git.BranchRef(b.main.branch)
	// The task is brought onto the head the runner recorded, never onto
	// whatever the branch points at (moved.go).
	if moved, err := b.Moved(ctx, meta.Iteration); err != nil {
		return fmt.Errorf("integrate task %s: %w", meta.Node, err)
	} else if moved != nil {
		meta.Note = strings.TrimSpace(meta.Note + " the run branch was found moved by someone else before this task landed: put back, kept under " + moved.Kept)
	}
	onto := b.main.head
	commit, err := ck.repo.Integrate(ctx, onto, task, m)
	var conflict *git.ConflictError
	switch {
	case errors.As(err, &conflict):
		return ck.failed(meta, out, &state.ConflictMeta{Kind: "conflict", Files: conflict.Files, Onto: onto}, task,
			fmt.Sprintf("The work of this task could not be brought onto the run branch: while it was worked on, other tasks landed there and changed the same lines. Nothing of it was lost (it is kept under %s), but the next attempt starts from the new checkpoint %s, which holds the other tasks' work: do the task again on top of it, keeping their changes.\n\nConflicted files: %s\n\n%s",
				git.AttemptRef(meta.Iteration), Short(onto), strings.Join(conflict.Files, ", "), conflict.Hunks))
	case errors.Is(err, git.ErrNoChange):
		meta.Note = strings.TrimSpace(meta.Note + " its changes were on the run branch already")
		if err := ck.restart(ctx, onto); err != nil {
			return err
		}
		return nil
	case err != nil:
		return fmt.Errorf("integrate task %s onto %s: %w", meta.Node, Short(onto), err)
	}
	guarded := false
	if commit != task && len(cfg.Guards) > 0 {
		// The run branch moved: the guards judge the result before it
		// moves again.
		guarded = true
		if ok, err := ck.guardsOnIntegrated(ctx, meta, out, snap, commit, guards); err != nil {
			return err
		} else if !ok {
			return ck.failed(meta, out, &state.ConflictMeta{Kind: "guards", Onto: onto}, task,
				fmt.Sprintf("The work of this task passed the guards on its own, but not once brought onto the run branch, where other tasks landed meanwhile (checkpoint %s). Nothing of it was lost (it is kept under %s); the next attempt starts from the new checkpoint: make the task work together with what is there.\n\nWhat failed, on the result:\n\n%s",
					Short(onto), git.AttemptRef(meta.Iteration), b.integrationFailure(meta.Iteration)))
		}
	}
	fsutil.FailAt(fsutil.FailGit, "commit")
	if err := ck.repo.UpdateRef(ctx, ref, commit, onto); err != nil {
		return fmt.Errorf("move the run branch %s to task %s's commit: %w", b.main.branch, meta.Node, err)
	}
	b.landed = commit
	fsutil.FailAt(fsutil.FailGit, "advance")
	found := b.p.RunDir(meta.Iteration)
	if guarded {
		found = filepath.Join(found, integrationGuard)
	}
	b.hooks.Landed(meta, onto, commit, found)
	if err := b.follow(ctx, commit); err != nil {
		return err
	}
	if err := ck.slotLanded(ctx, snap, task, commit, guarded); err != nil {
		return err
	}
	ck.landed = landing{iteration: meta.Iteration, commit: commit, onto: onto}
	return nil
}

// integrated returns the commit of the iteration's task on the run branch
// when a runner that died after moving the run branch made it, "" when
// there is none.
func (ck *Tree) integrated(ctx context.Context, meta *state.Meta) (string, error) {
	trailers := map[string]string{git.TrailerNode: meta.Node, git.TrailerIteration: strconv.Itoa(meta.Iteration)}
	found, err := ck.repo.FindByTrailers(ctx, git.BranchRef(ck.b.main.branch), 20, trailers)
	if err != nil {
		return "", fmt.Errorf("integrate task %s: %w", meta.Node, err)
	}
	return found, nil
}

// guardsOnIntegrated runs guards on commit, the task's work on the run
// branch's latest checkpoint, in the slot at work, whose files it brings
// from snap (the task's work, unchanged since) to commit; their logs are
// in runs/N/integration/. It reports whether they passed.
//
// The slot's HEAD stays at the checkpoint the task started from (ck.head)
// until the run branch moves: a runner that dies before then leaves the
// slot as its successor reads it, the task's work (and what landed
// meanwhile) changes from HEAD, which it integrates again. Were HEAD at
// commit, which is on no branch, the slot would hold no change, and the
// task would be recorded done with its work on no branch.
func (ck *Tree) guardsOnIntegrated(ctx context.Context, meta *state.Meta, out io.Writer, snap git.Snapshot, commit string, guards Guards) (bool, error) {
	if err := ck.repo.ResetFromSnapshot(ctx, snap, commit, ck.runtime); err != nil {
		return false, fmt.Errorf("slot %d: put the integrated result %s in its worktree: %w", ck.slot, Short(commit), err)
	}
	dir := filepath.Join(ck.b.p.RunDir(meta.Iteration), integrationGuard)
	if err := fsutil.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	fmt.Fprintf(out, "#%d %-24s integration: running the guards on the task brought onto %s\n", meta.Iteration, inert.Line(meta.NodePath), Short(ck.b.main.head))
	passed, err := guards(ctx, dir, ck.b.main.head)
	if err != nil {
		return false, err
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	return passed, nil
}

// integrationFailure is the failing guards' output on the integrated
// result, for failure.log.
func (b *Branch) integrationFailure(n int) string {
	data, err := fsutil.ReadLimited(filepath.Join(b.p.RunDir(n), integrationGuard, "failure.log"), 64<<10, false)
	if err != nil {
		return "(the guards' output is in " + b.p.Rel(filepath.Join(b.p.RunDir(n), integrationGuard)) + ")"
	}
	return string(data)
}

// failed records that the task could not be integrated: in meta
// (Conflict, which fails the attempt), failure.log (what the next
// attempt is told), the progress on out and the log; the coordinator
// journals it (ConflictWhat). The slot keeps the attempt's files for
// Record to keep under its attempt ref; the next task in it starts from
// the new checkpoint.
func (ck *Tree) failed(meta *state.Meta, out io.Writer, c *state.ConflictMeta, task, why string) error {
	meta.Conflict = c
	log := filepath.Join(ck.b.p.RunDir(meta.Iteration), "failure.log")
	if err := fsutil.WriteFileAtomic(log, []byte(why+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "#%d %-24s integration: %s; the task goes back to work from %s\n",
		meta.Iteration, inert.Line(meta.NodePath), inert.Line(ConflictWhat(c)), Short(ck.b.main.head))
	ck.b.log.Warn("a finished task could not be integrated onto the run branch", "iteration", meta.Iteration, "node", meta.Node,
		"kind", c.Kind, "files", strings.Join(c.Files, ", "), "onto", Short(c.Onto), "task", Short(task))
	return nil
}

// ConflictWhat says in a few words why a task could not be integrated.
func ConflictWhat(c *state.ConflictMeta) string {
	if c.Kind == "conflict" {
		return "conflict in " + strings.Join(c.Files, ", ")
	}
	return "guards failed on the result"
}
