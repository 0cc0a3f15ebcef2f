// Package runbranch is the run branch (SPEC §12, §14, §20) and the
// working trees the run's work is done in: the run branch's own (the
// checkout, or a linked worktree beside it) and each parallel slot's.
// It keeps each working tree's checkpoint, records a decided outcome in
// git (a finished task's commit on the run branch, made exactly once; a
// failed attempt under its attempt ref), integrates a slot's task onto
// the run branch and brings the working trees along (landing), and puts
// back a run branch someone else moved.
//
// It owns the run branch, the working trees' git state and the refs
// under refs/runner/. It must not touch the ledger (it tells the
// coordinator where the run branch went through Hooks), the tree or the
// prompt: the coordinator (package loop) decides what is recorded and
// tells it; what it did goes into the iteration's record it is handed
// (state.Meta: Checkpoint, AttemptRef, Conflict, Note).
package runbranch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/state"
)

// Branch is a run's run branch: its working tree and checkpoint (Main,
// nil without git checkpoints), and what the run's integrations share.
type Branch struct {
	main *Tree
	dir  string // the run branch's working tree; the repository without checkpoints

	p       state.Paths
	log     *log.Logger
	notices io.Writer
	hooks   Hooks

	// integ makes integrations one at a time (Integrate); taken without
	// the run's lock, which its holder gives up while guards run.
	integ sync.Mutex
	// landed is where the last landing of this run moved the run branch:
	// a reviewer working meanwhile in another slot finds the branch
	// there, moved by the runner, not by itself (Landed).
	landed string
	// warned are the iterations whose working tree was said to have
	// changed after the work was judged (judged.go), said once each.
	warned sync.Map

	// base is the branch the run branch follows (base.go); seenBase the
	// base's tip last followed, or that could not be; waitSaid: that the
	// base waits for a task's attempt was said.
	base, seenBase string
	waitSaid       bool
}

// Hooks are the coordinator's, called as the run branch moves.
type Hooks struct {
	// Checkpoint: the run branch's working tree is at commit, the run
	// branch's head (ledger.Checkpoint).
	Checkpoint func(branch, commit string)
	// Landed: meta's task landed as commit onto parent; dir holds what
	// its guards found (the next baseline: package preflight).
	Landed func(meta *state.Meta, parent, commit, dir string)
	// Setup is the room git.setup runs in, in the worktree at work of
	// slot (0: the run branch's own), and what removes its temporary
	// directory.
	Setup func(work string, slot int) (*sandbox.Room, func())
	// Base is the base recorded for the run branch ("" for none), and
	// SetBase records one (base.go).
	Base    func() string
	SetBase func(branch string)
	// Unrecorded is what the coordinator knows of the iterations that
	// worked in the run branch's working tree with no attempt's ref
	// holding their work (person.go).
	Unrecorded func() Unrecorded
}

// Tree is a working tree of the run with its git checkpoints: the
// working tree the agent and the guards work in (the checkout, a linked
// worktree, or a slot's), the run branch, and its last commit. A
// finished task's changes become a commit on the run branch; a failed
// attempt's are kept under refs/runner/attempts/<iteration>; the working
// tree goes back to the last checkpoint before another task starts on
// it. A nil *Tree is a working tree without git checkpoints.
type Tree struct {
	b      *Branch
	slot   int // 0: the run branch's own working tree
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
	// task's commit is on the run branch only once Integrate puts it
	// there, so nothing has to look for it before.
	begun int
	// landed is what the last integration in the slot did (land.go).
	landed landing
	// leftovers: the guards ran in the slot on an integrated result, and
	// may have left files there (Clean undoes them).
	leftovers bool
	// unsnappable: the working tree holds work git could not take as a
	// tree in time; it is discarded, not kept (judged.go).
	unsnappable bool
}

// Main is the run branch's working tree and checkpoint; nil without git
// checkpoints. A nil *Branch is a run without git checkpoints whose
// working tree is unknown.
func (b *Branch) Main() *Tree {
	if b == nil {
		return nil
	}
	return b.main
}

// Dir is the run branch's working tree, where the run's own iterations
// work: the repository root, or the linked worktree of git.worktree.
func (b *Branch) Dir() string {
	if b == nil {
		return ""
	}
	return b.dir
}

// Name is the run branch's name; "" without git checkpoints.
func (b *Branch) Name() string {
	if b.Main() == nil {
		return ""
	}
	return b.main.branch
}

// Repo is the git repository of the working tree.
func (t *Tree) Repo() *git.Repo { return t.repo }

// Head is the checkpoint the working tree is at; "" for none.
func (t *Tree) Head() string {
	if t == nil {
		return ""
	}
	return t.head
}

// Dirty is the task whose failed attempt the working tree holds, "?"
// for unknown changes, "" when it is at its checkpoint.
func (t *Tree) Dirty() string { return t.dirty }

// Runtime are the runner's own paths in the working tree, which
// snapshots and resets leave alone.
func (t *Tree) Runtime() []string { return t.runtime }

// Slot is the slot the working tree is, 0 for the run branch's own.
func (t *Tree) Slot() int { return t.slot }

// Begun notes that this runner began iteration n in the slot.
func (t *Tree) Begun(n int) {
	if t != nil && t.slot > 0 {
		t.begun = n
	}
}

// BaselineKey is the key of the baseline of the checkpoint the working
// tree is at: its commit, or state.WorktreeBaseline without git
// checkpoints.
func (t *Tree) BaselineKey() string {
	if t == nil {
		return state.WorktreeBaseline
	}
	return t.head
}

// Open sets up the run's checkpoints: inside a git repository, with
// git.checkpoint on, the run branch (created from HEAD by the first
// run, named after the tree's root, rootID), the checkout switched to it
// or a linked worktree on it, and the working tree the agent and the
// guards then work in. Without git, or outside a repository, or without
// any commit yet, it says once that checkpoints are off and the run goes
// on as without them. A checkout on another branch with changes outside
// .runner/ is refused: they are the person's work.
func Open(ctx context.Context, cfg *config.Config, p state.Paths, rootID string, notices io.Writer, l *log.Logger, hooks Hooks) (*Branch, error) {
	b := &Branch{dir: p.Root, p: p, log: l, notices: notices, hooks: hooks}
	if !cfg.Git.Checkpoint {
		fmt.Fprintln(notices, "runner: git checkpoints are off (git.checkpoint = false): no commit per task")
		return b, nil
	}
	repo, err := git.Open(ctx, p.Root, git.Options{Timeout: cfg.Git.Timeout.Duration})
	if err == nil {
		_, err = repo.HeadCommit(ctx)
	}
	switch {
	case errors.Is(err, git.ErrNoGit):
		fmt.Fprintf(notices, "runner: git checkpoints are off: %s\n", inert.Line(err.Error()))
		return b, nil
	case errors.Is(err, git.ErrNotRepo):
		fmt.Fprintln(notices, "runner: git checkpoints are off: not a git repository")
		return b, nil
	case errors.Is(err, git.ErrUnborn):
		fmt.Fprintln(notices, "runner: git checkpoints are off: the repository has no commit yet (commit once to have a commit per task)")
		return b, nil
	case err != nil:
		return nil, fmt.Errorf("git checkpoints: %w", err)
	}
	rel, err := filepath.Rel(repo.Top(), p.Dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("git checkpoints: %s is not inside the repository at %s", p.Dir, repo.Top())
	}
	t := &Tree{b: b, branch: strings.ReplaceAll(cfg.Git.Branch, "{root}", rootID), runtime: []string{filepath.ToSlash(rel) + "/"}}
	b.clearStaleLocks(repo, t.branch, cfg.Git.Worktree)
	cur, err := repo.CurrentBranch(ctx)
	if err != nil {
		return nil, fmt.Errorf("git checkpoints: %w", err)
	}
	var created bool
	if cfg.Git.Worktree {
		created, err = b.openWorktree(ctx, cfg, repo, t)
	} else {
		created, err = b.openInPlace(ctx, repo, t)
	}
	if err != nil {
		return nil, err
	}
	b.settleBase(cfg, t.branch, cur, created)
	if cfg.Git.Worktree {
		b.nameUncommitted(ctx, cfg, repo, t)
	}
	if t.head, err = t.repo.RefValue(ctx, git.BranchRef(t.branch)); err != nil {
		return nil, fmt.Errorf("git checkpoints: %w", err)
	}
	if err := b.recoverFollow(ctx, t); err != nil {
		return nil, fmt.Errorf("git checkpoints: %w", err)
	}
	if !cfg.Git.Worktree {
		if err := b.checkPersonal(ctx, t, cfg.Verify.Protect); err != nil {
			return nil, fmt.Errorf("git checkpoints: %w", err)
		}
	}
	changes, err := t.repo.Changes(ctx, t.runtime)
	if err != nil {
		return nil, fmt.Errorf("git checkpoints: %w", err)
	}
	if len(changes) > 0 {
		t.dirty = "?" // an attempt a previous run left, or one in flight
	}
	b.main, b.dir = t, t.repo.Top()
	return b, nil
}

// Short is a commit id as people read it.
func Short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// RunBranch is the name of the run branch the working tree's
// checkpoints are on.
func (t *Tree) RunBranch() string { return t.branch }
