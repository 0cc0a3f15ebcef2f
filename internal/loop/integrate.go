package loop

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

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

// integrate brings the finished task of the slot at work onto the run
// branch. It returns nil both when the task landed and when it could not
// (meta.Conflict says so); an error is a failure of the runner's own.
func (r *worker) integrate(ctx context.Context, meta *state.Meta, title string) error {
	ck := r.ck
	if ck.begun != meta.Iteration {
		// Resumed: a runner that died after moving the run branch made the
		// commit already. One that began the iteration has not.
		if found, err := r.integrated(ctx, meta); err != nil || found != "" {
			return err
		}
	}
	r.outside(func() { r.par.integ.Lock() })
	defer r.par.integ.Unlock()
	snap, err := r.judgedSnapshot(ctx, meta)
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
	ref := git.BranchRef(r.main.branch)
	// The task is brought onto the head the runner recorded, never onto
	// whatever the branch points at (runbranch.go).
	if moved, err := r.runBranchMoved(ctx, meta.Iteration); err != nil {
		return fmt.Errorf("integrate task %s: %w", meta.Node, err)
	} else if moved != nil {
		meta.Note = strings.TrimSpace(meta.Note + " the run branch was found moved by someone else before this task landed: put back, kept under " + moved.Kept)
	}
	onto := r.main.head
	commit, err := ck.repo.Integrate(ctx, onto, task, m)
	var conflict *git.ConflictError
	switch {
	case errors.As(err, &conflict):
		return r.integrationFailed(ctx, meta, &state.ConflictMeta{Kind: "conflict", Files: conflict.Files, Onto: onto}, task,
			fmt.Sprintf("The work of this task could not be brought onto the run branch: while it was worked on, other tasks landed there and changed the same lines. Nothing of it was lost (it is kept under %s), but the next attempt starts from the new checkpoint %s, which holds the other tasks' work: do the task again on top of it, keeping their changes.\n\nConflicted files: %s\n\n%s",
				git.AttemptRef(meta.Iteration), short(onto), strings.Join(conflict.Files, ", "), conflict.Hunks))
	case errors.Is(err, git.ErrNoChange):
		meta.Note = strings.TrimSpace(meta.Note + " its changes were on the run branch already")
		if err := r.restartSlot(ctx, onto); err != nil {
			return err
		}
		return nil
	case err != nil:
		return fmt.Errorf("integrate task %s onto %s: %w", meta.Node, short(onto), err)
	}
	guarded := false
	if commit != task && len(r.cfg.Guards) > 0 {
		// The run branch moved: the guards judge the result before it
		// moves again.
		guarded = true
		if ok, err := r.guardsOnIntegrated(ctx, meta, snap, commit); err != nil {
			return err
		} else if !ok {
			return r.integrationFailed(ctx, meta, &state.ConflictMeta{Kind: "guards", Onto: onto}, task,
				fmt.Sprintf("The work of this task passed the guards on its own, but not once brought onto the run branch, where other tasks landed meanwhile (checkpoint %s). Nothing of it was lost (it is kept under %s); the next attempt starts from the new checkpoint: make the task work together with what is there.\n\nWhat failed, on the result:\n\n%s",
					short(onto), git.AttemptRef(meta.Iteration), r.integrationFailure(meta.Iteration)))
		}
	}
	fsutil.FailAt(fsutil.FailGit, "commit")
	if err := ck.repo.UpdateRef(ctx, ref, commit, onto); err != nil {
		return fmt.Errorf("move the run branch %s to task %s's commit: %w", r.main.branch, meta.Node, err)
	}
	r.par.landed = commit
	fsutil.FailAt(fsutil.FailGit, "advance")
	found := r.p.RunDir(meta.Iteration)
	if guarded {
		found = filepath.Join(found, integrationGuard)
	}
	r.followBaseline(meta, onto, commit, found)
	if err := r.followRunBranch(ctx, commit); err != nil {
		return err
	}
	if err := r.slotLanded(ctx, snap, task, commit, guarded); err != nil {
		return err
	}
	ck.landed = landing{iteration: meta.Iteration, commit: commit, onto: onto}
	return nil
}

// integrated returns the commit of the iteration's task on the run branch
// when a runner that died after moving the run branch made it, "" when
// there is none.
func (r *worker) integrated(ctx context.Context, meta *state.Meta) (string, error) {
	trailers := map[string]string{git.TrailerNode: meta.Node, git.TrailerIteration: strconv.Itoa(meta.Iteration)}
	found, err := r.ck.repo.FindByTrailers(ctx, git.BranchRef(r.main.branch), 20, trailers)
	if err != nil {
		return "", fmt.Errorf("integrate task %s: %w", meta.Node, err)
	}
	return found, nil
}

// guardsOnIntegrated runs the guards on commit, the task's work on the
// run branch's latest checkpoint, in the slot at work, whose files it
// brings from snap (the task's work, unchanged since) to commit; their
// logs are in runs/N/integration/. It reports whether they passed.
//
// The slot's HEAD stays at the checkpoint the task started from (ck.head)
// until the run branch moves: a runner that dies before then leaves the
// slot as its successor reads it, the task's work (and what landed
// meanwhile) changes from HEAD, which it integrates again. Were HEAD at
// commit, which is on no branch, the slot would hold no change, and the
// task would be recorded done with its work on no branch.
func (r *worker) guardsOnIntegrated(ctx context.Context, meta *state.Meta, snap git.Snapshot, commit string) (bool, error) {
	ck := r.ck
	if err := ck.repo.ResetFromSnapshot(ctx, snap, commit, ck.runtime); err != nil {
		return false, fmt.Errorf("slot %d: put the integrated result %s in its worktree: %w", r.slot, short(commit), err)
	}
	dir := filepath.Join(r.p.RunDir(meta.Iteration), integrationGuard)
	if err := fsutil.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	fmt.Fprintf(r.out, "#%d %-24s integration: running the guards on the task brought onto %s\n", meta.Iteration, inert.Line(meta.NodePath), short(r.main.head))
	j, err := r.guardsIn(ctx, meta, dir, r.main.head)
	if err != nil {
		return false, err
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	return j.Verdict == state.GuardPass, nil
}

// integrationFailure is the failing guards' output on the integrated
// result, for failure.log.
func (r *worker) integrationFailure(n int) string {
	data, err := fsutil.ReadLimited(filepath.Join(r.p.RunDir(n), integrationGuard, "failure.log"), 64<<10, false)
	if err != nil {
		return "(the guards' output is in " + r.p.Rel(filepath.Join(r.p.RunDir(n), integrationGuard)) + ")"
	}
	return string(data)
}

// integrationFailed records that the task could not be integrated: in
// meta (Conflict, which fails the attempt), failure.log (what the next
// attempt is told), the journal's conflict record and the progress. The
// slot keeps the attempt's files for checkpoint to keep under its attempt
// ref; the next task in it starts from the new checkpoint.
func (r *worker) integrationFailed(ctx context.Context, meta *state.Meta, c *state.ConflictMeta, task, why string) error {
	meta.Conflict = c
	log := filepath.Join(r.p.RunDir(meta.Iteration), "failure.log")
	if err := fsutil.WriteFileAtomic(log, []byte(why+"\n"), 0o644); err != nil {
		return err
	}
	what := "guards failed on the result"
	if c.Kind == "conflict" {
		what = "conflict in " + strings.Join(c.Files, ", ")
	}
	fmt.Fprintf(r.out, "#%d %-24s integration: %s; the task goes back to work from %s\n",
		meta.Iteration, inert.Line(meta.NodePath), inert.Line(what), short(r.main.head))
	r.log.Warn("a finished task could not be integrated onto the run branch", "iteration", meta.Iteration, "node", meta.Node,
		"kind", c.Kind, "files", strings.Join(c.Files, ", "), "onto", short(c.Onto), "task", short(task))
	return r.ledger.Journal(state.Record{Iteration: meta.Iteration, Node: meta.Node, Slot: meta.Slot, Event: state.EventConflict,
		Paths: c.Files, Summary: what})
}

// titleOf is the title of task id as tree.json has it now, "" when it
// cannot be read or the task is gone.
func (r *Runner) titleOf(id string) string {
	t, err := r.loadTree()
	if err != nil {
		return ""
	}
	if n := t.Find(id); n != nil {
		return n.Title
	}
	return ""
}
