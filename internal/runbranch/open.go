package runbranch

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/inert"
)

// clearStaleLocks removes the git lock files that no live git holds (a
// git killed with a runner left them) in the trees this runner owns: its
// worktrees, the checkout when the work is done in place, the run
// branch's ref and the runner's refs. It holds the run's lock, so no other
// runner's git is at work there; without this, every later run would stop
// on git's "File exists".
func (b *Branch) clearStaleLocks(repo *git.Repo, branch string, worktree bool) {
	dirs := repo.RunnerWorktreeGitDirs()
	if !worktree {
		dirs = append(dirs, repo.GitDir())
	}
	stale := repo.StaleLocks(dirs, []string{git.BranchRef(branch), "refs/runner/"})
	if len(stale) == 0 {
		return
	}
	if err := git.RemoveLocks(stale); err != nil {
		b.log.Warn("could not remove a stale git lock file", "err", err)
	}
	names := make([]string, len(stale))
	for i, s := range stale {
		names[i] = inert.Line(s)
	}
	fmt.Fprintf(b.notices, "runner: removed git lock files no git holds, left by a git that was stopped with a runner: %s\n", strings.Join(names, ", "))
}

// openInPlace switches the checkout to the run branch (creating it from
// HEAD), unless it is on it already, and reports whether it created it;
// the person's uncommitted work on their branch is refused, never
// carried over.
func (b *Branch) openInPlace(ctx context.Context, repo *git.Repo, ck *Tree) (bool, error) {
	ck.repo = repo
	cur, err := repo.CurrentBranch(ctx)
	if err != nil {
		return false, fmt.Errorf("git checkpoints: %w", err)
	}
	if cur == ck.branch {
		return false, nil // changes here are the runner's or the person's (person.go)
	}
	changes, err := repo.Changes(ctx, ck.runtime[:1:1])
	if err != nil {
		return false, fmt.Errorf("git checkpoints: %w", err)
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
		return false, fmt.Errorf("the working tree (%s) has changes outside .runner/, which the runner would not carry into the run branch %s:\n  %s\n"+
			"commit them, `git stash` them, or set git.worktree = true in .runner/config.toml to leave this checkout alone",
			on, ck.branch, strings.Join(names, "\n  "))
	}
	at, created, err := repo.EnsureBranch(ctx, ck.branch, "HEAD")
	if err != nil {
		return false, fmt.Errorf("git checkpoints: %w", err)
	} else if created {
		fmt.Fprintf(b.notices, "runner: created the run branch %s from %s\n", ck.branch, inert.Line(cur))
	}
	if head, err := repo.HeadCommit(ctx); err == nil && !created {
		// Git's checkout replaces ignored files the run branch writes.
		if err := keepInTheWay(ctx, repo, head, at, b.notices); err != nil {
			return false, fmt.Errorf("git checkpoints: %w", err)
		}
	}
	if err := repo.SwitchBranch(ctx, ck.branch); err != nil {
		return false, fmt.Errorf("git checkpoints: switch the checkout to %s: %w", ck.branch, err)
	}
	fmt.Fprintf(b.notices, "runner: working on the run branch %s (your branch %s is left as it is)\n", ck.branch, inert.Line(cur))
	return created, nil
}

// openWorktree makes the agent and the guards work in a linked worktree
// on the run branch, beside the checkout (git.DefaultWorktreePath),
// reused from run to run; git.setup runs once when it is created. The
// checkout is not touched. It reports whether it created the run branch.
func (b *Branch) openWorktree(ctx context.Context, cfg *config.Config, repo *git.Repo, ck *Tree) (bool, error) {
	_, made, err := repo.EnsureBranch(ctx, ck.branch, "HEAD")
	if err != nil {
		return false, fmt.Errorf("git checkpoints: %w", err)
	}
	path, err := repo.DefaultWorktreePath(ck.branch)
	if err != nil {
		return false, fmt.Errorf("git checkpoints: %w", err)
	}
	wt, created, err := repo.AddWorktree(ctx, path, ck.branch)
	if err != nil {
		return false, fmt.Errorf("git checkpoints: the worktree at %s: %w", path, err)
	}
	where := "the worktree"
	if created {
		where = "a new worktree"
	}
	fmt.Fprintf(b.notices, "runner: the agent works in %s %s, on the run branch %s; your checkout is not touched (review the work with `git log %s`; `runner finish` brings it back)\n",
		where, path, ck.branch, ck.branch)
	log := filepath.Join(b.p.StateDir(), "setup.log")
	room, done := b.hooks.Setup(path, 0)
	defer done()
	if ran, err := wt.RunSetup(ctx, cfg.Git.Setup, log, cfg.Git.SetupTimeout.Duration, room); err != nil {
		return false, fmt.Errorf("git.setup in %s (its output is in %s): %w", path, b.p.Rel(log), err)
	} else if ran {
		fmt.Fprintf(b.notices, "runner: ran git.setup in the worktree (output in %s)\n", b.p.Rel(log))
	}
	ck.repo = wt
	// In the worktree, .runner/ holds the committed config and tree only:
	// the runner's own are in the checkout.
	return made, nil
}

// nameUncommitted says which of the person's files the agent does not
// see: the worktree starts from what is committed on the run branch, and
// changes in the checkout (outside .runner/) are not in it; committed on
// the base, they are when the run follows it (base.go).
func (b *Branch) nameUncommitted(ctx context.Context, cfg *config.Config, repo *git.Repo, ck *Tree) {
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
	hint := ""
	switch {
	case b.base != "" && cfg.Git.FollowBase:
		hint = fmt.Sprintf(" (committed on %s, they reach the run before its next task: it follows %s)", inert.Line(b.base), inert.Line(b.base))
	case b.base != "":
		hint = fmt.Sprintf(" (git.follow_base = false: committed on %s, they reach the run only while it has no task of its own, at its start)", inert.Line(b.base))
	}
	fmt.Fprintf(b.notices, "runner: not in the agent's worktree, because not committed: %s%s%s\n", strings.Join(names, ", "), more, hint)
}

// keepInTheWay keeps what a working tree holds that git does not track
// (a person's ignored .env, an ignored folder, an untracked file) where
// its move from commit from to commit to writes, as a commit under
// refs/runner/kept/, removes it, and says so: git's own move would
// replace an ignored file or folder without a word (git.InTheWay).
func keepInTheWay(ctx context.Context, repo *git.Repo, from, to string, notices io.Writer) error {
	if from == "" || from == to {
		return nil
	}
	paths, err := repo.InTheWay(ctx, from, to)
	if err != nil || len(paths) == 0 {
		return err
	}
	name := fmt.Sprintf("untracked-%s-%d", to, time.Now().UnixNano())
	m := git.Message{Subject: "files git did not track, in the way of the run branch",
		Body: fmt.Sprintf("The working tree moved from %s to %s, which writes where these files were.", from, to)}
	kept, err := repo.KeepFiles(ctx, name, from, paths, m)
	if err != nil {
		return fmt.Errorf("keep the files in the way of the run branch's %s in %s before it moves: %w", Short(to), repo.Top(), err)
	}
	for _, p := range paths {
		if err := os.RemoveAll(filepath.Join(repo.Top(), filepath.FromSlash(p))); err != nil {
			return fmt.Errorf("make way for the run branch's %s in %s (%s is kept under %s): %w", Short(to), repo.Top(), p, git.KeptPrefix+name, err)
		}
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = inert.Line(p)
	}
	fmt.Fprintf(notices, "runner: %s held files git does not track (ignored or untracked) where the run branch's %s writes: %s; they are kept under %s (git show %s:%s) and replaced\n",
		repo.Top(), Short(to), strings.Join(names, ", "), git.KeptPrefix+name, Short(kept), names[0])
	return nil
}
