package loop

import (
	"context"
	"os"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/engine/remote"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/preflight"
	"github.com/runner-cli/runner/internal/room"
	"github.com/runner-cli/runner/internal/runbranch"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/spend"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// start opens what the run works with, the ledger opened: the config and
// the tree read strictly, the rooms, the run branch, the engine, the
// slots; then it journals that the run started.
func (r *Runner) start(ctx context.Context) error {
	r.baselines = preflight.New(r.p, r.ledger, r.log, r.opts.Notices)
	r.env = &lane.Env{
		Paths: r.p, Config: func() *config.Config { return r.cfg }, Rooms: room.NewPolicy(r.p.Root),
		Care: r.ledger, Lock: &lane.Lock{}, Log: r.log, Baseline: r.baselines.Of, Tree: r.loadTree,
	}
	r.cache.prompts.p = r.p
	r.ledger.KeepPrompts(r.cache.prompts.write)
	if err := r.reload(); err != nil {
		return err
	}
	t, err := r.loadTree()
	if err != nil {
		return err
	}
	if err := spend.UnknownExecutors(r.cfg, t, r.p.Rel(r.p.Tree())); err != nil {
		return err
	}
	if err := r.ledger.Load(); err != nil {
		return err
	}
	if err := r.env.Rooms.Probe(r.cfg); err != nil {
		return err
	}
	if err := r.openBranch(ctx, t); err != nil {
		return err
	}
	if err := r.openEngine(ctx); err != nil {
		return err
	}
	if err := r.openSlots(); err != nil {
		return err
	}
	r.env.Rooms.RemoveStale(r.ledger.State().Flights())
	if err := r.env.Rooms.Decide(r.cfg, r.env.Branch.Dir(), r.opts.Notices); err != nil {
		return err
	}
	if r.engine != nil {
		if err := r.engine.NoteProtection(); err != nil {
			return err
		}
	}
	r.ledger.SetKeepRuns(r.cfg.Loop.KeepRuns)
	r.ledger.SetFinished(nil) // a finished run goes on
	r.startSpend(t)
	if err := r.ledger.Journal(state.Record{Event: state.EventRunStarted, RunnerPID: os.Getpid()}); err != nil {
		return err
	}
	// A stop requested while no runner was running is stale.
	fsutil.Remove(r.p.StopRequest())
	return nil
}

// openBranch opens the run branch and its working tree (runbranch.Open),
// and puts back what a runner that died while its guards ran left
// hidden there.
func (r *Runner) openBranch(ctx context.Context, t *tree.Tree) error {
	var err error
	r.env.Branch, err = runbranch.Open(ctx, r.cfg, r.p, t.Root.ID, r.opts.Notices, r.log, runbranch.Hooks{
		Checkpoint: r.ledger.Checkpoint,
		Landed:     r.followBaseline,
		Setup:      func(work string, slot int) (*sandbox.Room, func()) { return r.env.Rooms.Setup(r.cfg, work, slot) },
		Base:       func() string { return r.ledger.State().Base },
		SetBase:    r.ledger.SetBase,
		Unrecorded: r.unrecorded,
	})
	if err != nil {
		return err
	}
	if main := r.env.Branch.Main(); main != nil {
		lane.RestoreLeftHidden(main, r.log)
		r.ledger.Checkpoint(main.RunBranch(), main.Head())
	}
	return nil
}

// openEngine opens, with [engine], the engine whose workers run the
// iterations (remote.Open).
func (r *Runner) openEngine(ctx context.Context) error {
	var err error
	r.engine, err = remote.Open(ctx, r.env, r.opts.Notices, remote.Hooks{
		Journal: r.ledger.Journal,
		Took: func(l *lane.Local, meta *state.Meta, worker string) {
			r.ledger.WorkerStarted(meta.Iteration, worker)
			r.startedOn(l, meta, worker)
		},
	})
	return err
}
