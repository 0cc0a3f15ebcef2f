package loop

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/preflight"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/scrub"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// judgesOf are the guards and checks that judge meta's iteration in this
// worker's lane, against the baseline of key ("" for none).
func (r *worker) judgesOf(meta *state.Meta, key string) iteration.Guards {
	g := iteration.Guards{Work: r.workDir, Guards: r.cfg.Guards, Grace: r.cfg.Executor.KillGrace.Duration, Env: r.guardEnv(meta)}
	if meta.CheckSpecs == nil {
		// Resumed from the in-flight marker alone: the tree as it is now.
		if t, err := r.loadTree(); err == nil {
			meta.CheckSpecs = checkSpecs(tree.ChecksOf(t, meta.Node))
			meta.Removes = tree.RemovesOf(t, meta.Node)
		}
	}
	for _, c := range meta.CheckSpecs {
		g.Checks = append(g.Checks, iteration.CheckOf(c))
	}
	g.Removes = meta.Removes
	if key != "" {
		g.Baseline = r.baselines.Of(r.cfg.Guards, key)
	}
	if room, _, err := r.rooms.Room(r.cfg, meta.Iteration, r.workDir); err == nil {
		g.Room = room
	}
	return g
}

// checkSpecs are checks as meta.json keeps them.
func checkSpecs(checks []tree.NodeCheck) []state.CheckSpec {
	out := []state.CheckSpec{}
	for _, c := range checks {
		out = append(out, state.CheckSpec{Node: c.Node, Name: c.Name, Run: c.Run, Timeout: c.Timeout, OutputLimit: c.OutputLimit, Report: c.Report})
	}
	return out
}

// checkGuard is a check as a guard runs it, the guards' defaults applied.
func checkGuard(c tree.Check) config.Guard {
	return iteration.CheckOf(state.CheckSpec{Name: c.Name, Run: c.Run, Timeout: c.Timeout, OutputLimit: c.OutputLimit, Report: c.Report}).Guard
}

// probeChecks runs a task's own checks once on its untouched checkpoint,
// before its first attempt (SPEC §18): a check that passes there cannot
// tell whether the task is done. It notes those in meta.Vacuous and says
// so; they still judge the task.
func (r *worker) probeChecks(ctx context.Context, node *tree.Node, meta *state.Meta) {
	if node.Attempts > 0 || len(node.Checks) == 0 {
		return
	}
	checks := make([]iteration.Check, len(node.Checks))
	for i, c := range node.Checks {
		checks[i] = iteration.Check{Node: node.ID, Guard: checkGuard(c)}
	}
	dir := filepath.Join(r.p.RunDir(meta.Iteration), "checks-before")
	if err := fsutil.MkdirAll(dir, 0o755); err != nil {
		return
	}
	room, _, err := r.rooms.Room(r.cfg, meta.Iteration, r.workDir)
	if err != nil {
		return
	}
	passing, tally, err := iteration.Probe(ctx, r.workDir, checks, r.cfg.Executor.KillGrace.Duration, r.guardEnv(meta), room, dir, iteration.Hooks{Outside: r.outside})
	if err != nil {
		return
	}
	meta.ChecksBefore = tally
	if len(passing) == 0 {
		return
	}
	meta.Vacuous = passing
	fmt.Fprintf(r.out, "#%d %-24s check %s passes before any work: it proves nothing about this task\n",
		meta.Iteration, inert.Line(meta.NodePath), inert.Line(strings.Join(passing, ", ")))
}

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
	at := preflight.Checkpoint{Dir: r.branch.Dir()}
	if main := r.branch.Main(); main != nil {
		at.Git, at.Head, at.Dirty = true, main.Head(), main.Dirty()
	}
	return r.baselines.Run(ctx, r.cfg, at, preflight.Env{
		Room:          func() (*sandbox.Room, string, error) { return r.rooms.Room(r.cfg, 0, r.branch.Dir()) },
		Cleanup:       func() { r.rooms.RemoveTempDir(0) },
		KillLeftovers: r.killLeftoverPreflight,
		Scrubber:      func() (*scrub.Scrubber, error) { return r.scrubberFor(r.cfg) },
	})
}
