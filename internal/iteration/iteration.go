// Package iteration runs the work of one iteration where its agent runs:
// the agent (or the reviewer) in the iteration's working tree, the check
// of what it changed of its judges, and the guards on the result. It is
// handed a Spec and hands back what happened; it knows nothing of the
// task tree, the ledger, the run branch or other slots. A lane (package
// lane here, a worker of package engine elsewhere) calls it; the
// coordinator (package loop) decides what runs, makes each phase durable
// between the steps here, and records the outcome.
//
// The steps are separate calls, not one, because the coordinator writes
// a durable phase between them (SPEC §8) and a runner resuming an
// iteration enters at a later step: guards after agent_done, a review
// after guards_done.
package iteration

import (
	"context"
	"fmt"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/verify"
)

// Spec is one run of a program of an iteration, its agent or its
// reviewer, as the coordinator hands it over.
type Spec struct {
	// Request is what the program is given: its working tree, the
	// runner's folder, its run folder, the prompt and the answer's schema.
	Request executor.Request
	// Executor is the executor the chain chose, its options resolved.
	Executor executor.Options
	// Judged is what the program may not change (SPEC §13): taken before
	// it starts and checked when it exits.
	Judged verify.Judged
	// TamperDir is where what it changed of its judges is kept, and
	// TamperPrefix that folder as meta.json names it (relative to the
	// iteration's run folder).
	TamperDir, TamperPrefix string
	Hooks                   Hooks
}

// Hooks are the coordinator's, called at the points of a step where it
// must act. Each may be nil.
type Hooks struct {
	// Outside runs f, a wait for a process, without the coordinator's
	// lock; nil runs f directly.
	Outside func(f func())
	// Exited is called as soon as the program's processes are gone,
	// before anything of the working tree is checked: the coordinator
	// puts back what of its own files the program removed.
	Exited func() error
	// Ran is called when the guards have run, before what they did is
	// checked (the crash tests kill the runner there).
	Ran func()
}

func (h Hooks) outside(f func()) {
	if h.Outside == nil {
		f()
		return
	}
	h.Outside(f)
}

// Run is what one run of a program gave.
type Run struct {
	// Result is the executor's result; nil when the program could not be
	// started (StartErr says why) or the runner failed.
	Result *executor.Result
	// StartErr is set when the program did not run: the executor's error.
	StartErr error
	// Tamper lists what the program changed of its judges: kept under
	// TamperDir and put back.
	Tamper []state.TamperMeta
}

// BeforeStartError is an error of RunProgram that came before the
// program started: its judges could not be read.
type BeforeStartError struct{ Err error }

func (e *BeforeStartError) Error() string { return e.Err.Error() }
func (e *BeforeStartError) Unwrap() error { return e.Err }

// RunProgram runs the program of s once and checks its judges. The
// error is the runner's own failure (its judges could not be read, a
// BeforeStartError, or put back; a hook failed); a program that could not
// be started is reported in Run.StartErr.
func RunProgram(ctx context.Context, s Spec) (Run, error) {
	base, err := verify.Take(s.Judged)
	if err != nil {
		return Run{}, &BeforeStartError{err}
	}
	var run Run
	s.Hooks.outside(func() { run.Result, run.StartErr = executor.Run(ctx, s.Executor, s.Request) })
	if s.Hooks.Exited != nil {
		if err := s.Hooks.Exited(); err != nil {
			return Run{}, err
		}
	}
	if run.Tamper, err = RestoreJudges(base, s.TamperDir, s.TamperPrefix); err != nil {
		return Run{}, err
	}
	return run, nil
}

// RestoreJudges finds what changed of the judges since base was taken,
// keeps the changed versions under dir, puts the originals back, and
// returns each change with its Kept path under prefix.
func RestoreJudges(base *verify.Baseline, dir, prefix string) ([]state.TamperMeta, error) {
	changes, err := base.Check()
	if err != nil {
		return nil, fmt.Errorf("check what changed of the judges: %w", err)
	}
	if len(changes) == 0 {
		return nil, nil
	}
	kept, err := base.Keep(changes, dir)
	if err != nil {
		return nil, fmt.Errorf("keep what changed of the judges: %w", err)
	}
	if err := base.Restore(changes); err != nil {
		return nil, fmt.Errorf("put back what changed of the judges: %w", err)
	}
	tamper := make([]state.TamperMeta, 0, len(changes))
	for i, c := range changes {
		t := state.TamperMeta{Path: c.Rel, Change: c.Kind}
		if kept[i] != "" {
			t.Kept = prefix + kept[i]
		}
		tamper = append(tamper, t)
	}
	return tamper, nil
}
