package loop

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/ledger"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// AbandonNote is the note of an iteration set aside by Abandon.
const AbandonNote = "abandoned with `runner abandon`: set aside without an outcome, no attempt spent"

// Abandon sets aside iteration n, which a runner that stopped left
// unfinished, without running anything of it again: a person's way out
// when the iteration cannot be recorded (its record fails every time, or
// its phase is not wanted any more). Its agent and guards, if any are
// left, are stopped; meta.json gets phase aborted with AbandonNote, the
// journal an aborted record, and the run state loses its marker. No
// attempt is spent and the tree is not touched. Its work stays where the
// agent left it (the checkout, a slot, the run worktree): the next run
// keeps what no attempt claims under refs/runner/kept/ before a task
// starts on the checkpoint. It takes the lock: no runner may be running.
func Abandon(opts Options, n int) (*state.Meta, error) {
	if opts.Log == nil {
		opts.Log = log.New(io.Discard)
	}
	l, err := ledger.Open(opts.Paths, opts.Log)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	if err := l.Load(); err != nil {
		return nil, err
	}
	if _, err := l.Left(); err != nil {
		return nil, err
	}
	in := l.State().Flight(n)
	if in == nil {
		var left []string
		for _, f := range l.State().Flights() {
			left = append(left, fmt.Sprintf("%d (%s, phase %s)", f.Iteration, f.Node, f.Phase))
		}
		if len(left) == 0 {
			return nil, fmt.Errorf("abandon: iteration %d is not unfinished, and no iteration is: there is nothing to abandon", n)
		}
		return nil, fmt.Errorf("abandon: iteration %d is not unfinished; the unfinished ones: %s", n, strings.Join(left, ", "))
	}
	cfg, err := config.Load(opts.Paths.Config())
	if err != nil {
		return nil, err
	}
	lane.KillLeftovers(opts.Paths, in, cfg.Executor.KillGrace.Duration, opts.Log)
	meta, err := l.LoadMeta(n)
	if err != nil {
		return nil, fmt.Errorf("abandon iteration %d: %w", n, err)
	}
	if meta != nil && (meta.Phase == state.PhaseRecorded || meta.Phase == state.PhaseAborted) {
		return nil, fmt.Errorf("abandon: iteration %d is %s already (its meta.json says so); the next `runner run` finishes what is left of it", n, meta.Phase)
	}
	if meta == nil {
		t, err := tree.Load(opts.Paths.Tree())
		if err != nil {
			t = nil // without a tree, the task is named by its id
		}
		meta = rebuiltMeta(opts.Paths, cfg, in, t)
		if err := l.Rebuilt(meta); err != nil {
			return nil, fmt.Errorf("abandon iteration %d: %w", n, err)
		}
	}
	l.Resume(true)
	defer l.Resume(false)
	if err := l.EndResumed(meta, AbandonNote+fmt.Sprintf(" (it was in phase %s)", meta.Phase)); err != nil {
		return nil, fmt.Errorf("abandon iteration %d: %w", n, err)
	}
	return meta, nil
}
