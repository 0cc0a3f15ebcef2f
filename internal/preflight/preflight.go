// Package preflight runs the guards once on the untouched checkpoint
// before the run's first agent (SPEC §13, §18), and keeps the baselines
// the tasks are judged against: what the guards found on a checkpoint
// (state/baselines/), carried along by the tasks that land.
//
// It owns state/preflight/ and state/baselines/, and the run state's
// preflight through the ledger's two calls for it. It must not touch the
// tree, the run branch or an iteration's record: the coordinator (package
// loop) tells it where the checkpoint is and when a task landed.
package preflight

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/guard"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/ratelimit"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/scrub"
	"github.com/runner-cli/runner/internal/state"
)

// Before the first agent of a `runner run`, the guards run once on the
// untouched checkpoint, and what they find is its baseline. A guard with
// a test report that fails there judges tasks by regression: its tests
// that already fail may keep failing. A guard without one that fails
// there fails every task whatever its agent does, so the run stops with
// an error before any agent is paid: no iteration begins, no attempt is
// spent, and the guards' logs go to state/preflight/, not to a run
// folder.
//
// With git checkpoints a preflight is kept in the run state
// (ledger.SetPreflight), keyed by the checkpoint's commit and a digest of
// the guards, its baseline in state/baselines/; the runner's own task
// commits carry it along (the task's guards ran on them), so it runs
// again only when the guards changed or the run branch moved otherwise.
// A working tree that holds changes since the checkpoint (a failed
// attempt's, kept for its next attempt) is not the untouched checkpoint:
// the preflight waits for a run that starts on a clean one. Without
// checkpoints there is no commit to key a result by: the preflight runs
// at every `runner run` whose working tree holds no failed attempt's
// leftovers, that is, before any iteration was recorded or when the last
// one succeeded.

// Mark is in the environment of a preflight's guards, so that what they
// leave behind when the runner is killed is found and stopped by the
// next runner.
const Mark = "RUNNER_PREFLIGHT=1"

// Ledger is what the preflight and the baselines read and write of the
// ledger (package ledger): the run state's preflight, and its care of
// the runner's files around the guards.
type Ledger interface {
	State() *state.RunState
	Preflight() *state.Preflight
	SetPreflight(*state.Preflight)
	GuardsStarting()
	GuardsEnded(n int) error
}

// Baselines are a run's baselines and its preflight.
type Baselines struct {
	p       state.Paths
	ledger  Ledger
	log     *log.Logger
	notices io.Writer
	ran     bool // the preflight ran, or was not needed
}

// New returns the baselines of the run whose files are at p; notices is
// where the preflight says what it found.
func New(p state.Paths, l Ledger, lg *log.Logger, notices io.Writer) *Baselines {
	return &Baselines{p: p, ledger: l, log: lg, notices: notices}
}

// Checkpoint is where the preflight runs: the run branch's working tree
// Dir, with git checkpoints (Git) at the commit Head, holding a failed
// attempt's changes when Dirty is not "".
type Checkpoint struct {
	Dir         string
	Git         bool
	Head, Dirty string
}

// Env is what the preflight's guards run with: the room of iteration 0
// (the guards run the repository's code) and what removes its temporary
// directory, what stops the guards a killed runner's preflight left, and
// the scrubber for the output the error quotes.
type Env struct {
	Room          func() (*sandbox.Room, string, error)
	Cleanup       func()
	KillLeftovers func()
	Scrubber      func() (*scrub.Scrubber, error)
}

// Bounds on the head of a failing guard's output the error quotes, and
// on the failing tests the baseline's summary names.
const (
	preflightHeadLines = 15
	preflightHeadBytes = 2 << 10
	baselineNames      = 5
)

// Run runs the preflight before the run's first agent; later calls do
// nothing. It returns an error, which ends the run, when a guard without
// a test report fails or the guards were interrupted; one that Is
// ratelimit.ErrStopped when `runner stop` was asked while it ran.
func (b *Baselines) Run(ctx context.Context, cfg *config.Config, at Checkpoint, env Env) error {
	if b.ran {
		return nil
	}
	b.ran = true
	if !cfg.Verify.Preflight || len(cfg.Guards) == 0 {
		return nil
	}
	digest := Digest(cfg.Guards)
	on, key := "the working tree", state.WorktreeBaseline
	if at.Git {
		on, key = "the checkpoint "+short(at.Head), at.Head
		if c := b.ledger.Preflight(); c != nil && c.Commit == at.Head && c.Guards == digest && b.Of(cfg.Guards, key) != nil {
			fmt.Fprintf(b.notices, "runner: preflight: the guards ran on %s before; not run again (its baseline stands)\n", on)
			return nil
		}
		if at.Dirty != "" {
			fmt.Fprintf(b.notices, "runner: preflight skipped: the working tree holds changes since %s (a failed attempt's, kept for its next attempt); it runs when a run starts on a clean checkpoint\n", on)
			return nil
		}
	} else if !untouched(b.ledger.State()) {
		fmt.Fprintln(b.notices, "runner: preflight skipped: the last attempt failed and left its changes in the working tree (no git checkpoint to go back to)")
		return nil
	}
	fmt.Fprintf(b.notices, "runner: preflight: running the guards on %s before any agent\n", on)
	results, err := b.runGuards(ctx, cfg, at.Dir, env)
	if err != nil {
		return fmt.Errorf("preflight: %w", err)
	}
	if failed := b.failure(cfg, on, results, env); failed != nil {
		return failed
	}
	base := &state.Baseline{Key: key, Guards: digest, At: time.Now().UTC(), From: "preflight"}
	for i, res := range results {
		base.Results = append(base.Results, iteration.Found(cfg.Guards[i], res))
	}
	if err := state.SaveBaseline(b.p, base); err != nil {
		return fmt.Errorf("preflight: keep the baseline: %w", err)
	}
	if at.Git {
		pf := &state.Preflight{Commit: at.Head, Guards: digest, At: base.At}
		if t := state.TallyOf(base); t != nil {
			pf.Passing = &t.Passing
		}
		b.ledger.SetPreflight(pf)
	}
	b.say(on, base)
	if _, err := os.Stat(b.p.StopRequest()); err == nil {
		return stopAfterPreflight{}
	}
	return nil
}

// stopAfterPreflight ends the run when `runner stop` was asked while the
// preflight ran: no agent starts. It is a stop asked while waiting, to
// the loop (which consumes the request).
type stopAfterPreflight struct{}

func (stopAfterPreflight) Error() string { return "after the preflight, before any agent started" }

func (stopAfterPreflight) Is(target error) bool { return target == ratelimit.ErrStopped }

// runGuards runs the guards in the working tree dir, their logs in
// state/preflight/, with the ledger's care for the runner's files as
// around an iteration's guards. Their environment has RUNNER_DIR, and no
// RUNNER_ITERATION or RUNNER_NODE_ID: no iteration runs.
func (b *Baselines) runGuards(ctx context.Context, cfg *config.Config, dir string, env Env) ([]guard.Result, error) {
	logs := b.p.PreflightDir()
	if err := fsutil.MkdirAll(logs, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", b.p.Rel(logs), err)
	}
	env.KillLeftovers()
	b.ledger.GuardsStarting()
	room, tmp, err := env.Room()
	if err != nil {
		return nil, err
	}
	defer env.Cleanup()
	vars := []string{"RUNNER_DIR=" + b.p.Dir, Mark}
	if tmp != "" {
		vars = append(vars, "TMPDIR="+tmp)
	}
	results, _, err := guard.RunJudged(ctx, dir, cfg.Guards, filepath.Join(logs, "guard.log"), filepath.Join(logs, "failure.log"),
		cfg.Executor.KillGrace.Duration, vars, nil, room)
	if ierr := b.ledger.GuardsEnded(0); ierr != nil {
		return nil, ierr
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return results, err
}

// untouched tells, without git checkpoints, whether the working tree is
// free of a failed attempt's leftovers: no iteration was recorded yet, or
// the last one succeeded (done with guards that did not fail, or
// decomposed), so its changes were accepted.
func untouched(rs *state.RunState) bool {
	if rs.Iteration == 0 {
		return true
	}
	switch rs.LastStatus {
	case "done":
		return rs.LastGuard != state.GuardFail
	case "decomposed":
		return true
	}
	return false
}

// short is a commit id as people read it.
func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
