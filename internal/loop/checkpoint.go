package loop

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// checkpoints is a run's git checkpoints (SPEC §12): the working tree the
// agent and the guards work in (the checkout, or a linked worktree), the
// run branch, and its last commit. A finished task's changes become a
// commit on the run branch; a failed attempt's are kept under
// refs/runner/attempts/<iteration>; the working tree goes back to the
// last checkpoint before another task starts on it.
type checkpoints struct {
	repo   *git.Repo
	branch string
	head   string // the last checkpoint: the run branch's commit
	// runtime are the runner's own paths, relative to the working tree's
	// top, that snapshots and resets leave alone (.runner/ as a whole: the
	// state, the runs, the context files, and the tree and config, whose
	// runner-owned fields change with every iteration).
	runtime []string
	// dirty is the task whose failed attempt left its changes in the
	// working tree, for the next attempt at it to start from ("" when
	// the tree is at the checkpoint; "?" when unknown: a run found changes
	// on the run branch at start).
	dirty string

	// With parallel slots (a slot's checkpoints):
	// begun is the iteration this runner began last in the slot: its
	// task's commit is on the run branch only once integrate puts it
	// there, so nothing has to look for it before.
	begun int
	// landed is what the last integration in the slot did (land.go).
	landed landing
	// leftovers: the guards ran in the slot on an integrated result, and
	// may have left files there (cleanSlot undoes them).
	leftovers bool
	// unsnappable: the working tree holds work git could not take as a
	// tree in time; it is discarded, not kept (judgedtree.go).
	unsnappable bool
}

// openCheckpoints sets up the run's checkpoints: inside a git repository,
// with git.checkpoint on, the run branch (created from HEAD by the first
// run), the checkout switched to it or a linked worktree on it, and the
// working tree the agent and the guards then work in. Without git, or
// outside a repository, or without any commit yet, it says once that
// checkpoints are off and the run goes on as without them. A checkout on
// another branch with changes outside .runner/ is refused: they are the
// person's work.
func (r *Runner) openCheckpoints(ctx context.Context, t *tree.Tree) error {
	r.mainDir = r.p.Root
	if !r.cfg.Git.Checkpoint {
		fmt.Fprintln(r.opts.Notices, "runner: git checkpoints are off (git.checkpoint = false): no commit per task")
		return nil
	}
	repo, err := git.Open(ctx, r.p.Root, git.Options{Timeout: r.cfg.Git.Timeout.Duration})
	if err == nil {
		_, err = repo.HeadCommit(ctx)
	}
	switch {
	case errors.Is(err, git.ErrNoGit):
		fmt.Fprintf(r.opts.Notices, "runner: git checkpoints are off: %s\n", inert.Line(err.Error()))
		return nil
	case errors.Is(err, git.ErrNotRepo):
		fmt.Fprintln(r.opts.Notices, "runner: git checkpoints are off: not a git repository")
		return nil
	case errors.Is(err, git.ErrUnborn):
		fmt.Fprintln(r.opts.Notices, "runner: git checkpoints are off: the repository has no commit yet (commit once to have a commit per task)")
		return nil
	case err != nil:
		return fmt.Errorf("git checkpoints: %w", err)
	}
	rel, err := filepath.Rel(repo.Top(), r.p.Dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("git checkpoints: %s is not inside the repository at %s", r.p.Dir, repo.Top())
	}
	ck := &checkpoints{branch: strings.ReplaceAll(r.cfg.Git.Branch, "{root}", t.Root.ID), runtime: []string{filepath.ToSlash(rel) + "/"}}
	r.clearStaleLocks(repo, ck.branch)
	if r.cfg.Git.Worktree {
		err = r.openWorktree(ctx, repo, ck)
	} else {
		err = r.openInPlace(ctx, repo, ck)
	}
	if err != nil {
		return err
	}
	if ck.head, err = ck.repo.RefValue(ctx, git.BranchRef(ck.branch)); err != nil {
		return fmt.Errorf("git checkpoints: %w", err)
	}
	changes, err := ck.repo.Changes(ctx, ck.runtime)
	if err != nil {
		return fmt.Errorf("git checkpoints: %w", err)
	}
	if len(changes) > 0 {
		ck.dirty = "?" // an attempt a previous run left, or one in flight
	}
	r.main = ck
	r.mainDir = ck.repo.Top()
	r.restoreLeftHidden(ck)
	r.ledger.Checkpoint(ck.branch, ck.head)
	return nil
}

// clearStaleLocks removes the git lock files that no live git holds (a
// git killed with a runner left them) in the trees this runner owns: its
// worktrees, the checkout when the work is done in place, the run
// branch's ref and the runner's refs. It holds the run's lock, so no other
// runner's git is at work there; without this, every later run would stop
// on git's "File exists".
func (r *Runner) clearStaleLocks(repo *git.Repo, branch string) {
	dirs := repo.RunnerWorktreeGitDirs()
	if !r.cfg.Git.Worktree {
		dirs = append(dirs, repo.GitDir())
	}
	stale := repo.StaleLocks(dirs, []string{git.BranchRef(branch), "refs/runner/"})
	if len(stale) == 0 {
		return
	}
	if err := git.RemoveLocks(stale); err != nil {
		r.log.Warn("could not remove a stale git lock file", "err", err)
	}
	names := make([]string, len(stale))
	for i, s := range stale {
		names[i] = inert.Line(s)
	}
	fmt.Fprintf(r.opts.Notices, "runner: removed git lock files no git holds, left by a git that was stopped with a runner: %s\n", strings.Join(names, ", "))
}

// openInPlace switches the checkout to the run branch (creating it from
// HEAD), unless it is on it already; the person's uncommitted work on
// their branch is refused, never carried over.
func (r *Runner) openInPlace(ctx context.Context, repo *git.Repo, ck *checkpoints) error {
	ck.repo = repo
	cur, err := repo.CurrentBranch(ctx)
	if err != nil {
		return fmt.Errorf("git checkpoints: %w", err)
	}
	if cur == ck.branch {
		return nil // changes here are the runner's: an attempt in flight or kept
	}
	changes, err := repo.Changes(ctx, ck.runtime[:1:1])
	if err != nil {
		return fmt.Errorf("git checkpoints: %w", err)
	}
	var names []string
	for _, c := range changes {
		if !strings.HasPrefix(c.Path, ck.runtime[0]) { // .runner/ is the runner's
			names = append(names, inert.Line(c.String()))
		}
	}
	if len(names) > 0 {
		on := "branch " + inert.Line(cur)
		if cur == "" {
			on = "a detached HEAD"
		}
		if len(names) > 20 {
			names = append(names[:20], fmt.Sprintf("... and %d more", len(names)-20))
		}
		return fmt.Errorf("the working tree (%s) has changes outside .runner/, which the runner would not carry into the run branch %s:\n  %s\n"+
			"commit them, `git stash` them, or set git.worktree = true in .runner/config.toml to leave this checkout alone",
			on, ck.branch, strings.Join(names, "\n  "))
	}
	at, created, err := repo.EnsureBranch(ctx, ck.branch, "HEAD")
	if err != nil {
		return fmt.Errorf("git checkpoints: %w", err)
	} else if created {
		fmt.Fprintf(r.opts.Notices, "runner: created the run branch %s from %s\n", ck.branch, inert.Line(cur))
	}
	if head, err := repo.HeadCommit(ctx); err == nil && !created {
		// Git's checkout replaces ignored files the run branch writes.
		if err := keepInTheWay(ctx, repo, head, at, r.opts.Notices); err != nil {
			return fmt.Errorf("git checkpoints: %w", err)
		}
	}
	if err := repo.SwitchBranch(ctx, ck.branch); err != nil {
		return fmt.Errorf("git checkpoints: switch the checkout to %s: %w", ck.branch, err)
	}
	fmt.Fprintf(r.opts.Notices, "runner: working on the run branch %s (your branch %s is left as it is)\n", ck.branch, inert.Line(cur))
	return nil
}

// openWorktree makes the agent and the guards work in a linked worktree
// on the run branch, beside the checkout (git.DefaultWorktreePath),
// reused from run to run; git.setup runs once when it is created. The
// checkout is not touched.
func (r *Runner) openWorktree(ctx context.Context, repo *git.Repo, ck *checkpoints) error {
	if _, _, err := repo.EnsureBranch(ctx, ck.branch, "HEAD"); err != nil {
		return fmt.Errorf("git checkpoints: %w", err)
	}
	path, err := repo.DefaultWorktreePath(ck.branch)
	if err != nil {
		return fmt.Errorf("git checkpoints: %w", err)
	}
	wt, created, err := repo.AddWorktree(ctx, path, ck.branch)
	if err != nil {
		return fmt.Errorf("git checkpoints: the worktree at %s: %w", path, err)
	}
	where := "the worktree"
	if created {
		where = "a new worktree"
	}
	fmt.Fprintf(r.opts.Notices, "runner: the agent works in %s %s, on the run branch %s; your checkout is not touched (review the work with `git log %s`, merge it when you are done)\n",
		where, path, ck.branch, ck.branch)
	r.nameUncommitted(ctx, repo, ck)
	log := filepath.Join(r.p.StateDir(), "setup.log")
	room, done := r.rooms.Setup(r.cfg, path, 0)
	defer done()
	if ran, err := wt.RunSetup(ctx, r.cfg.Git.Setup, log, r.cfg.Git.SetupTimeout.Duration, room); err != nil {
		return fmt.Errorf("git.setup in %s (its output is in %s): %w", path, r.p.Rel(log), err)
	} else if ran {
		fmt.Fprintf(r.opts.Notices, "runner: ran git.setup in the worktree (output in %s)\n", r.p.Rel(log))
	}
	ck.repo = wt
	// In the worktree, .runner/ holds the committed config and tree only:
	// the runner's own are in the checkout.
	return nil
}

// nameUncommitted says which of the person's files the agent does not
// see: the worktree starts from what is committed on the run branch, and
// changes in the checkout (outside .runner/) are not in it.
func (r *Runner) nameUncommitted(ctx context.Context, repo *git.Repo, ck *checkpoints) {
	changes, err := repo.Changes(ctx, ck.runtime[:1:1])
	if err != nil {
		return
	}
	var names []string
	for _, c := range changes {
		if !strings.HasPrefix(c.Path, ck.runtime[0]) {
			names = append(names, inert.Line(c.Path))
		}
	}
	if len(names) == 0 {
		return
	}
	more := ""
	if len(names) > 10 {
		more = fmt.Sprintf(" and %d more", len(names)-10)
		names = names[:10]
	}
	fmt.Fprintf(r.opts.Notices, "runner: not in the agent's worktree, because not committed: %s%s (commit them for the agent to see them)\n",
		strings.Join(names, ", "), more)
}

// startTask puts the working tree back to the last checkpoint before an
// iteration on node, when it holds another task's failed attempt (kept
// under its attempt ref): no task starts on another's leftovers. The
// next attempt at the same task starts from its own.
func (r *worker) startTask(ctx context.Context, node string) error {
	ck := r.ck
	if ck == nil || ck.dirty == "" || ck.dirty == node {
		return nil
	}
	if ck.dirty == "?" && r.ledger.State().LastNode == node {
		ck.dirty = node // the same task goes on from where it was left
		return nil
	}
	if ck.dirty == "?" {
		// Found when the run began: no attempt's ref holds it (a person's
		// work, an abandoned iteration's), so it is kept before the reset.
		if err := r.keepStartTree(ctx, node); err != nil {
			return err
		}
	}
	if err := ck.repo.ResetWorktree(ctx, ck.head, ck.runtime); err != nil {
		return fmt.Errorf("put the working tree back to the checkpoint %s before task %s: %w", short(ck.head), node, err)
	}
	ck.dirty = ""
	return nil
}

// keepStartTree keeps what the working tree held when the run began,
// beyond the checkpoint, as a commit under refs/runner/kept/, before task
// node starts on the checkpoint, and says so.
func (r *worker) keepStartTree(ctx context.Context, node string) error {
	ck := r.ck
	m := git.Message{Subject: "changes found in the working tree when the run began",
		Body: fmt.Sprintf("Task %s starts on the checkpoint %s, which these changes were made on.", node, ck.head)}
	k, err := keepChanges(ctx, ck, fmt.Sprintf("%s-%d", ck.head, time.Now().UnixNano()), m, nil)
	if err != nil || k == nil {
		return wrapKeep(err, ck, "before task "+node+" starts")
	}
	r.log.Warn("the working tree held changes from before this run; they are kept, and the next task starts on the checkpoint",
		"dir", ck.repo.Top(), "kept", k.ref, "commit", short(k.commit), "files", k.files)
	fmt.Fprintf(r.opts.Notices, "runner: %s held changes from before this run (%d files); they are kept under %s (git diff %s %s), and task %s starts on the checkpoint\n",
		ck.repo.Top(), k.files, k.ref, short(ck.head), k.ref, node)
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
func keepChanges(ctx context.Context, ck *checkpoints, name string, m git.Message, skip func(tree string) (bool, error)) (*kept, error) {
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
func wrapKeep(err error, ck *checkpoints, when string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("keep the changes in %s %s: %w", ck.repo.Top(), when, err)
}

// checkpoint records a decided outcome in git, before the ledger records
// it: a finished task's changes become one commit on the run branch
// (found again by its trailers when a crash came after it, so it is made
// once), a failed attempt's are kept under its attempt ref, and the
// working tree goes back to the checkpoint when the task became blocked.
// What it did goes into meta (Checkpoint, AttemptRef).
func (r *worker) checkpoint(ctx context.Context, meta *state.Meta, title string) error {
	ck := r.ck
	if ck == nil {
		if meta.Outcome == state.OutcomeDone {
			// Without checkpoints the working tree as the task left it is
			// the next task's start.
			r.followBaseline(meta, "", state.WorktreeBaseline, r.p.RunDir(meta.Iteration))
		}
		return nil
	}
	if meta.Outcome == state.OutcomeDone {
		return r.commitTask(ctx, meta, title)
	}
	if ck.unsnappable {
		return r.discardUnsnappable(ctx, meta)
	}
	snap, err := ck.repo.Snapshot(ctx, ck.head, ck.runtime)
	if errors.Is(err, git.ErrTimeout) && ctx.Err() == nil {
		// Work git cannot take in time is not kept: it would stop every
		// later run at this same step.
		meta.Note = strings.TrimSpace(meta.Note + " its work was too large to keep (git.timeout); discarded")
		fmt.Fprintf(r.opts.Notices, "runner: the work of iteration %d is too large for git to keep within git.timeout (%s); it is discarded\n", meta.Iteration, r.cfg.Git.Timeout.Duration)
		return r.discardUnsnappable(ctx, meta)
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
