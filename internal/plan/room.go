package plan

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/room"
	"github.com/runner-cli/runner/internal/sandbox"
)

// The planning agent works as an iteration's does (SPEC §19): in a linked
// worktree of its own, detached at the checkout's HEAD and removed once
// it answered, confined to it, a temporary directory and its tools'
// directories. Its proposal is its final message; nothing it writes
// reaches the person's checkout, .git or .runner/. In a folder that is
// no git repository (or has no commit yet), it works in the checkout
// itself, which its room then leaves read-only. Where it cannot be
// confined the plan says so, as a run does; sandbox.mode = "required"
// refuses.

// worktreeName is the planning agent's worktree, beside the checkout
// (git.DefaultWorktreePath).
const worktreeName = "runner-plan"

// agentRoom is where the planning agent works.
type agentRoom struct {
	work string        // its working directory
	room *sandbox.Room // nil: not confined
	tmp  string        // its TMPDIR and output directory when confined
	// why says why it is not confined; openings what its room leaves
	// open.
	why      string
	openings []string
	done     func() // removes the worktree and the temporary directory
}

// errSandboxRequired ends a plan whose agent cannot be confined as
// sandbox.mode = "required" asks.
var errSandboxRequired = errors.New(`sandbox.mode = "required"`)

// prepareRoom makes the planning agent's room, and says what it leaves
// open (or why there is none) on progress.
func (r *run) prepareRoom(ctx context.Context) (*agentRoom, error) {
	a := &agentRoom{work: r.p.Root, done: func() {}}
	mode := r.cfg.Sandbox.Mode
	if mode == config.SandboxOff {
		a.why = `sandbox.mode = "off"`
		fmt.Fprintln(r.o.Progress, `runner: plan: the agent is not confined (sandbox.mode = "off"): it can write anything this user can`)
		return a, nil
	}
	layers := proc.RoomLayers(r.cfg.Sandbox.MaxProcesses)
	switch {
	case layers.Landlock < 1 && mode == config.SandboxRequired:
		return nil, fmt.Errorf("%w: the agent cannot be confined: %s; `runner doctor` says what this machine gives", errSandboxRequired, layers.NoLandlock)
	case layers.Landlock < 1:
		a.why = layers.NoLandlock
		fmt.Fprintf(r.o.Progress, "runner: plan: the agent is NOT confined: %s; it works in your checkout (`runner doctor` says more)\n", inert.Line(a.why))
		return a, nil
	case mode == config.SandboxRequired && layers.Missing():
		return nil, fmt.Errorf("%w: the agent's room would leave open: %s; `runner doctor` says what this machine gives",
			errSandboxRequired, strings.Join(layers.Openings(), "; "))
	}
	// A writable directory holding the checkout opens the room, as it
	// does a run's: the agent could write tree.json and .git.
	if why := room.Opened(r.cfg, r.p.Root); why != "" {
		if mode == config.SandboxRequired {
			return nil, fmt.Errorf("%w: the agent cannot be confined: %s; `runner doctor` says what this machine gives", errSandboxRequired, why)
		}
		a.why = why
		fmt.Fprintf(r.o.Progress, "runner: plan: the agent is NOT confined: %s; it works in your checkout (`runner doctor` says more)\n", inert.Line(a.why))
		return a, nil
	}
	tmp, err := os.MkdirTemp("", "runner-plan-")
	if err != nil {
		return nil, fmt.Errorf("the agent's temporary directory: %w", err)
	}
	a.tmp = tmp
	writable := tmp
	removeWorktree := func() {}
	if repo, wt, path, err := r.planWorktree(ctx); err == nil {
		a.work, writable = path, path
		removeWorktree = func() { repo.RemoveWorktree(context.WithoutCancel(ctx), wt.Top(), true) }
	} else if !errors.Is(err, git.ErrNotRepo) && !errors.Is(err, git.ErrUnborn) && !errors.Is(err, git.ErrNoGit) {
		fsutil.RemoveAll(tmp)
		return nil, fmt.Errorf("the agent's worktree: %w", err)
	}
	a.done = func() {
		removeWorktree()
		fsutil.RemoveAll(tmp)
	}
	a.room = r.o.Room(r.cfg, writable, tmp)
	if a.room == nil {
		a.done()
		return nil, errors.New("no room for the agent") // cannot happen: the checks above
	}
	a.openings = layers.Openings()
	if len(a.openings) > 0 {
		fmt.Fprintf(r.o.Progress, "runner: plan: the agent's room leaves open: %s (`runner doctor` lists every layer)\n", inert.Line(strings.Join(a.openings, "; ")))
	}
	return a, nil
}

// planWorktree makes the planning agent's worktree, detached at HEAD: one
// left by a plan that was killed is removed first.
func (r *run) planWorktree(ctx context.Context) (*git.Repo, *git.Repo, string, error) {
	repo, err := git.Open(ctx, r.p.Root, git.Options{Timeout: r.cfg.Git.Timeout.Duration})
	if err != nil {
		return nil, nil, "", err
	}
	head, err := repo.ResolveCommit(ctx, "HEAD")
	if err != nil {
		return nil, nil, "", git.ErrUnborn
	}
	path, err := repo.DefaultWorktreePath(worktreeName)
	if err != nil {
		return nil, nil, "", err
	}
	repo.RemoveWorktree(ctx, path, true) // a killed plan's, if any
	wt, _, err := repo.AddDetachedWorktree(ctx, path, head)
	if err != nil {
		return nil, nil, "", err
	}
	return repo, wt, path, nil
}
