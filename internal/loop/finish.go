package loop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/ledger"
	"github.com/runner-cli/runner/internal/runbranch"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// `runner finish` (SPEC §23) ends a stopped run: it brings the run branch
// onto its base (a merge, the guards on a merge commit first) or pushes
// it for a pull request (finish_pr.go), or neither (--abandon); then it
// removes the run's worktrees, refused with the paths where one holds a
// change no attempt of the run's holds, and after a merge the run
// branch. Nothing is changed before every check passed: a refusal leaves
// the repository as it was. It holds the run's lock throughout.

// How `runner finish` ends the run (FinishOptions.Mode).
const (
	FinishMerge   = "merge"
	FinishPR      = "pr"
	FinishAbandon = "abandon"
)

// FinishOptions say how Finish ends the run.
type FinishOptions struct {
	Mode string // FinishMerge (default), FinishPR or FinishAbandon
	// Keep keeps the run's worktrees and the run branch.
	Keep bool
	// Out receives what it did, line by line.
	Out io.Writer
}

// finishing is what Finish works with.
type finishing struct {
	repo    *git.Repo
	branch  string // the run branch
	base    string
	head    string // the run branch's head
	runtime []string
	wts     []runbranch.RunWorktree
	inPlace bool
}

// Finish ends the run at opts.Paths as fo says, and returns how.
func Finish(ctx context.Context, opts Options, fo FinishOptions) (*state.Finished, error) {
	if opts.Log == nil {
		opts.Log = log.New(io.Discard)
	}
	if fo.Out == nil {
		fo.Out = io.Discard
	}
	if opts.Notices == nil {
		opts.Notices = fo.Out
	}
	if fo.Mode == "" {
		fo.Mode = FinishMerge
	}
	r := &Runner{opts: opts, p: opts.Paths, log: opts.Log}
	var err error
	if r.ledger, err = ledger.Open(r.p, r.log); err != nil {
		return nil, err
	}
	defer r.ledger.Close()
	if err := r.ledger.Load(); err != nil {
		return nil, err
	}
	if fl := r.ledger.State().Flights(); len(fl) > 0 {
		return nil, fmt.Errorf("finish: iteration %d was left unfinished by a runner that stopped: `runner run` finishes it (or `runner abandon %d` sets it aside), then `runner finish`",
			fl[0].Iteration, fl[0].Iteration)
	}
	if err := r.reload(); err != nil {
		return nil, err
	}
	f, err := r.openFinish(ctx)
	if err != nil {
		return nil, err
	}
	if !fo.Keep {
		if err := f.refuseChanged(ctx); err != nil {
			return nil, err
		}
	}
	fin := &state.Finished{Branch: f.branch, Base: f.base, Commit: f.head}
	switch fo.Mode {
	case FinishMerge:
		err = r.finishMerge(ctx, f, fin, fo.Out)
	case FinishPR:
		err = r.finishPR(ctx, f, fin, fo.Out)
	case FinishAbandon:
		fin.How = state.FinishedAbandoned
	default:
		err = fmt.Errorf("finish: unknown way %q", fo.Mode)
	}
	if err != nil {
		return nil, err
	}
	if !fo.Keep {
		err = f.cleanUp(ctx, fin, fo.Out)
	}
	if pruned, perr := runbranch.PruneRefs(ctx, f.repo, r.cfg.Git.KeepRefs, time.Now(), nil); perr != nil {
		r.log.Warn("could not prune the refs under refs/runner/", "err", perr)
	} else {
		err = errors.Join(err, r.journalPruned(pruned))
	}
	fin.At = time.Now().UTC()
	return fin, errors.Join(err, r.recordFinished(fin))
}

// openFinish finds the run branch, its base and its worktrees.
func (r *Runner) openFinish(ctx context.Context) (*finishing, error) {
	if !r.cfg.Git.Checkpoint {
		return nil, errors.New("finish: git checkpoints are off (git.checkpoint = false): there is no run branch to finish")
	}
	repo, err := git.Open(ctx, r.p.Root, git.Options{Timeout: r.cfg.Git.Timeout.Duration})
	if err != nil {
		return nil, fmt.Errorf("finish: %w", err)
	}
	rs := r.ledger.State()
	f := &finishing{repo: repo, branch: rs.Branch, base: r.cfg.Git.Base, inPlace: !r.cfg.Git.Worktree}
	if f.branch == "" {
		t, err := tree.Load(r.p.Tree())
		if err != nil {
			return nil, err
		}
		f.branch = strings.ReplaceAll(r.cfg.Git.Branch, "{root}", t.Root.ID)
	}
	if f.base == "" {
		f.base = rs.Base
	}
	if f.head, err = repo.RefValue(ctx, git.BranchRef(f.branch)); err != nil {
		return nil, fmt.Errorf("finish: %w", err)
	} else if f.head == "" {
		if fin := rs.Finished; fin != nil {
			return nil, fmt.Errorf("finish: the run is finished already (%s, %s): `runner run` starts a new one", fin.How, fin.At.Local().Format(time.DateTime))
		}
		return nil, fmt.Errorf("finish: the run branch %s does not exist: there is nothing to finish", inert.Line(f.branch))
	}
	rel, err := filepath.Rel(repo.Top(), r.p.Dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("finish: %s is not inside the repository at %s", r.p.Dir, repo.Top())
	}
	f.runtime = []string{filepath.ToSlash(rel) + "/"}
	if f.wts, err = runbranch.RunWorktrees(ctx, repo, f.branch); err != nil {
		return nil, fmt.Errorf("finish: %w", err)
	}
	return f, nil
}

// refuseChanged refuses to go on when one of the run's worktrees holds a
// change no attempt of the run's holds, naming the paths: it would be
// lost with the worktree.
func (f *finishing) refuseChanged(ctx context.Context) error {
	var held []string
	for _, wt := range f.wts {
		paths, err := runbranch.PersonsChanges(ctx, f.repo, wt.Path, f.runtime)
		if err != nil {
			return fmt.Errorf("finish: look for changes in %s: %w", wt.Path, err)
		}
		if len(paths) > 10 {
			paths = append(paths[:10], fmt.Sprintf("and %d more", len(paths)-10))
		}
		if len(paths) > 0 {
			held = append(held, fmt.Sprintf("%s: %s", wt.Path, inert.Line(strings.Join(paths, ", "))))
		}
	}
	if len(held) == 0 {
		return nil
	}
	return fmt.Errorf("finish: refused, nothing was changed: the run's worktrees hold uncommitted changes that removing them would lose:\n  %s\n"+
		"commit them on %s there (or remove them), or keep the worktrees with `runner finish --keep`",
		strings.Join(held, "\n  "), inert.Line(f.branch))
}

// finishMerge brings the run branch onto its base: a fast-forward, or a
// merge commit the guards pass first.
func (r *Runner) finishMerge(ctx context.Context, f *finishing, fin *state.Finished, out io.Writer) error {
	if f.base == "" {
		return fmt.Errorf("finish: the run branch's base is not known: name it with git.base in %s (or use --pr)", r.p.Rel(r.p.Config()))
	}
	o, err := runbranch.BringOnto(ctx, f.repo, f.branch, f.base)
	var conflict *git.ConflictError
	switch {
	case errors.Is(err, runbranch.ErrNothingToBring):
		fin.How, fin.Commit = state.FinishedMerged, o.Tip
		fmt.Fprintf(out, "%s holds every commit of %s already: nothing to merge\n", inert.Line(f.base), inert.Line(f.branch))
		return nil
	case errors.As(err, &conflict):
		return fmt.Errorf("finish: refused, nothing was changed: %s cannot be merged into %s: conflict in %s. "+
			"Merge it yourself (`git merge %s` on %s), or `runner run` again to have the run take %s in first",
			inert.Line(f.branch), inert.Line(f.base), inert.Line(strings.Join(conflict.Files, ", ")), inert.Line(f.branch), inert.Line(f.base), inert.Line(f.base))
	case err != nil:
		return fmt.Errorf("finish: %w", err)
	}
	if !o.FastForward {
		if err := r.judgeFinish(ctx, f, o); err != nil {
			return err
		}
	}
	if err := runbranch.MoveBase(ctx, f.repo, o); err != nil {
		return fmt.Errorf("finish: refused, nothing was changed: %w", err)
	}
	fin.How, fin.Commit = state.FinishedMerged, o.Result
	how := "fast-forward"
	if !o.FastForward {
		how = "merge commit, the guards passed on it"
	}
	fmt.Fprintf(out, "merged %s into %s (%s, %s): %s is at %s\n", inert.Line(f.branch), inert.Line(f.base), commitsN(o.Ahead), how, inert.Line(f.base), runbranch.Short(o.Result))
	return nil
}

// cleanUp removes the run's worktrees and, after a merge, the run branch
// (in place, the checkout goes back to the base first).
func (f *finishing) cleanUp(ctx context.Context, fin *state.Finished, out io.Writer) error {
	for _, wt := range f.wts {
		// refuseChanged found nothing of the person's there; an
		// attempt's leftovers are kept under its ref.
		if err := f.repo.RemoveWorktree(ctx, wt.Path, true); err != nil {
			return fmt.Errorf("finish: remove the worktree %s: %w", wt.Path, err)
		}
		fmt.Fprintf(out, "removed the worktree %s\n", wt.Path)
	}
	fin.WorktreesRemoved = true
	if fin.How != state.FinishedMerged {
		fmt.Fprintf(out, "kept the run branch %s (`git branch -D %s` deletes it)\n", inert.Line(f.branch), inert.Line(f.branch))
		return nil
	}
	if f.inPlace {
		if cur, err := f.repo.CurrentBranch(ctx); err == nil && cur == f.branch {
			if err := f.repo.SwitchBranch(ctx, f.base); err != nil {
				return fmt.Errorf("finish: merged, but the checkout could not go back to %s, so the run branch %s is kept: %w", inert.Line(f.base), inert.Line(f.branch), err)
			}
			fmt.Fprintf(out, "the checkout is on %s again\n", inert.Line(f.base))
		}
	}
	if err := f.repo.DeleteRef(ctx, git.BranchRef(f.branch), f.head); err != nil {
		return fmt.Errorf("finish: merged, but the run branch %s could not be deleted: %w", inert.Line(f.branch), err)
	}
	fin.BranchDeleted = true
	fmt.Fprintf(out, "deleted the run branch %s (it was at %s)\n", inert.Line(f.branch), runbranch.Short(f.head))
	return nil
}

// recordFinished records how the run ended, for `runner status`, and
// journals it.
func (r *Runner) recordFinished(fin *state.Finished) error {
	if fin.How == "" {
		return nil
	}
	r.ledger.SetFinished(fin)
	summary := fmt.Sprintf("%s %s", fin.How, fin.Branch)
	if fin.Base != "" && fin.How == state.FinishedMerged {
		summary += " into " + fin.Base
	}
	if fin.URL != "" {
		summary += " (" + fin.URL + ")"
	}
	if err := r.ledger.Journal(state.Record{Event: state.EventFinished, Outcome: fin.How, Summary: summary}); err != nil {
		return err
	}
	return r.ledger.Flush()
}

// commitsN is "1 commit", "3 commits".
func commitsN(n int) string {
	if n == 1 {
		return "1 commit"
	}
	return fmt.Sprintf("%d commits", n)
}
