package loop

import (
	"context"

	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/preflight"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/scrub"
	"github.com/runner-cli/runner/internal/state"
)

// followBaseline makes what the guards found on a task that landed the
// baseline of its commit (preflight.Baselines.Follow).
func (r *Runner) followBaseline(meta *state.Meta, parent, commit, dir string) {
	var inUse []string
	if r.par != nil {
		for _, s := range r.par.slots {
			if s != nil && s.ck != nil {
				inUse = append(inUse, s.ck.Head())
			}
		}
	}
	r.baselines.Follow(r.cfg, meta, parent, commit, dir, inUse)
}

// preflight runs the preflight before the run's first agent, on the run
// branch's working tree (package preflight).
func (r *Runner) preflight(ctx context.Context) error {
	if r.opts.NoPreflight {
		return nil
	}
	at := preflight.Checkpoint{Dir: r.env.Branch.Dir()}
	if main := r.env.Branch.Main(); main != nil {
		at.Git, at.Head, at.Dirty = true, main.Head(), main.Dirty()
	}
	return r.baselines.Run(ctx, r.cfg, at, preflight.Env{
		Room:          func() (*sandbox.Room, string, error) { return r.env.Rooms.Room(r.cfg, 0, r.env.Branch.Dir()) },
		Cleanup:       func() { r.env.Rooms.RemoveTempDir(0) },
		KillLeftovers: func() { lane.KillPreflightLeftovers(r.p, r.cfg.Executor.KillGrace.Duration, r.log) },
		Scrubber:      func() (*scrub.Scrubber, error) { return r.scrubberFor(r.cfg) },
	})
}
