package preflight

import (
	"context"
	"fmt"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/state"
)

// Result is a commit the runner would move a branch to without a task's
// iteration (SPEC §23): the base merged into the run branch, or the run
// branch brought onto its base by `runner finish`. Dir is the working
// tree that holds it, Logs where the guards' guard.log and failure.log
// go, Parent the checkpoint whose baseline judges it, Commit the result.
type Result struct {
	Dir, Logs      string
	Parent, Commit string
	// From says where Commit's baseline comes from ("the base merged
	// in").
	From string
}

// Judge runs the guards on a result, as a task's are run: in its room,
// each judged against the baseline of its parent (a guard with a test
// report fails by a test that regressed, one without by its exit
// status), their logs in res.Logs. What they found becomes the result's
// baseline when they pass, and the run's preflight follows it as it
// follows a task's commit. It reports whether they passed; the error is
// the runner's own failure or the context's end.
func (b *Baselines) Judge(ctx context.Context, cfg *config.Config, res Result, env Env) (bool, error) {
	if len(cfg.Guards) == 0 {
		return true, nil
	}
	if err := fsutil.MkdirAll(res.Logs, 0o755); err != nil {
		return false, fmt.Errorf("create %s: %w", b.p.Rel(res.Logs), err)
	}
	env.KillLeftovers()
	b.ledger.GuardsStarting()
	room, tmp, err := env.Room()
	if err != nil {
		return false, err
	}
	defer env.Cleanup()
	vars := []string{"RUNNER_DIR=" + b.p.Dir, Mark}
	if tmp != "" {
		vars = append(vars, "TMPDIR="+tmp)
	}
	g := iteration.Guards{Work: res.Dir, Guards: cfg.Guards, Grace: cfg.Executor.KillGrace.Duration, Env: vars,
		Baseline: b.Of(cfg.Guards, res.Parent), Room: room}
	j, err := iteration.Judge(ctx, g, res.Logs, iteration.Hooks{})
	if ierr := b.ledger.GuardsEnded(0); err == nil {
		err = ierr
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil || j.Verdict != state.GuardPass {
		return false, err
	}
	digest := Digest(cfg.Guards)
	base := &state.Baseline{Key: res.Commit, Guards: digest, At: time.Now().UTC(), From: res.From, Results: j.Found}
	if err := state.SaveBaseline(b.p, base); err != nil {
		b.log.Warn("could not keep the baseline of the result; the next run's preflight finds it", "commit", short(res.Commit), "err", err)
		return true, nil
	}
	if c := b.ledger.Preflight(); c != nil && c.Commit == res.Parent && c.Guards == digest {
		next := *c
		next.Commit = res.Commit
		b.ledger.SetPreflight(&next)
	}
	return true, nil
}
