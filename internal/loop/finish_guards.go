package loop

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/preflight"
	"github.com/runner-cli/runner/internal/room"
	"github.com/runner-cli/runner/internal/runbranch"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/scrub"
)

// judgeFinish runs the guards on o's merge commit before `runner finish`
// moves the base to it: in a worktree of its own, detached at the merge
// (git.setup run there first), removed after; judged against the run
// branch head's baseline, as a task's result is. A failure refuses the
// finish, nothing changed, naming where the guards' output is.
func (r *Runner) judgeFinish(ctx context.Context, f *finishing, o *runbranch.Onto) error {
	if len(r.cfg.Guards) == 0 {
		return nil
	}
	path, err := f.repo.DefaultWorktreePath(f.branch + "-finish")
	if err != nil {
		return fmt.Errorf("finish: %w", err)
	}
	if err := f.repo.RemoveWorktree(ctx, path, true); err != nil {
		// None there: a finish cut short leaves its worktree behind.
		r.log.Debug("no worktree of an earlier finish", "path", path, "err", err)
	}
	wt, _, err := f.repo.AddDetachedWorktree(ctx, path, o.Result)
	if err != nil {
		return fmt.Errorf("finish: a worktree to run the guards on the merge: %w", err)
	}
	defer func() {
		if err := f.repo.RemoveWorktree(context.WithoutCancel(ctx), path, true); err != nil {
			r.log.Warn("could not remove the worktree of the guards' run", "path", path, "err", err)
		}
	}()
	logs := filepath.Join(r.p.StateDir(), "finish")
	rooms := room.NewPolicy(r.p.Root)
	if err := rooms.Probe(r.cfg); err != nil {
		return err
	}
	if err := rooms.Decide(r.cfg, path, r.opts.Notices); err != nil {
		return err
	}
	setupRoom, done := rooms.Setup(r.cfg, path, 0)
	_, err = wt.RunSetup(ctx, r.cfg.Git.Setup, filepath.Join(logs, "setup.log"), r.cfg.Git.SetupTimeout.Duration, setupRoom)
	done()
	if err != nil {
		return fmt.Errorf("finish: git.setup in %s (its output is in %s): %w", path, r.p.Rel(filepath.Join(logs, "setup.log")), err)
	}
	fmt.Fprintf(r.opts.Notices, "runner: running the guards on %s merged into %s\n", inert.Line(f.branch), inert.Line(f.base))
	baselines := preflight.New(r.p, r.ledger, r.log, r.opts.Notices)
	passed, err := baselines.Judge(ctx, r.cfg, preflight.Result{Dir: path, Logs: logs, Parent: o.Head, Commit: o.Result, From: "runner finish's merge"},
		preflight.Env{
			Room:          func() (*sandbox.Room, string, error) { return rooms.Room(r.cfg, 0, path) },
			Cleanup:       func() { rooms.RemoveTempDir(0) },
			KillLeftovers: func() { lane.KillPreflightLeftovers(r.p, r.cfg.Executor.KillGrace.Duration, r.log) },
			Scrubber:      func() (*scrub.Scrubber, error) { return r.scrubberFor(r.cfg) },
		})
	if err != nil {
		return fmt.Errorf("finish: the guards on the merge: %w", err)
	}
	if !passed {
		return fmt.Errorf("finish: refused, nothing was changed: the guards failed on %s merged into %s (their output is in %s). "+
			"Fix it on %s (`runner run` with a task for it, or by hand), then `runner finish` again; `runner finish --pr` opens a pull request instead",
			inert.Line(f.branch), inert.Line(f.base), r.p.Rel(filepath.Join(logs, "failure.log")), inert.Line(f.branch))
	}
	return nil
}
