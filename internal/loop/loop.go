// Package loop ties the runner together: at each iteration boundary it
// re-reads the config and the tree, selects the next node, writes the
// context files, builds the prompt, runs the agent and the guards, and
// records the outcome in the tree and the state files. Every phase of an
// iteration is recorded durably before the next begins, so a runner that
// died can pick up where it stopped.
package loop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// Reason says why a run ended.
type Reason int

// Why Run returned.
const (
	Complete      Reason = iota // every leaf is done
	Stuck                       // blocked nodes or nothing selectable
	MaxIterations               // the iteration limit was reached with work left
	Stopped                     // `runner stop` asked for it
	Interrupted                 // SIGINT/SIGTERM
	OnceDone                    // --once ran its iteration
)

// Result is how a run ended.
type Result struct {
	Reason     Reason
	Iterations int    // iterations run by this invocation
	Message    string // one line for the user
}

// Options configure one `runner run`.
type Options struct {
	Paths         state.Paths
	MaxIterations int // 0: loop.max_iterations from the config
	Once          bool
	Progress      io.Writer // one line per iteration
	Log           *log.Logger
}

// Runner is one run of the loop over one repository.
type Runner struct {
	opts  Options
	p     state.Paths
	log   *log.Logger
	cfg   *config.Config
	rs    *state.RunState
	count int

	resuming bool // resolving an iteration a previous runner left in flight
}

// Run takes the lock, resolves an iteration a previous runner left in
// flight, and loops until the tree is complete, stuck, the iteration
// limit is reached, a stop is requested, or ctx is cancelled.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if opts.Log == nil {
		opts.Log = log.New(io.Discard)
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	r := &Runner{opts: opts, p: opts.Paths, log: opts.Log}

	// Refuse a broken config or tree before touching anything.
	if err := r.reload(); err != nil {
		return nil, err
	}
	if _, err := r.loadTree(); err != nil {
		return nil, err
	}

	lock, err := state.AcquireLock(r.p)
	if err != nil {
		return nil, err
	}
	defer lock.Release()

	if err := r.cleanTemps(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(r.p.StateDir(), 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(r.p.RunsDir(), 0o755); err != nil {
		return nil, err
	}
	// A stop requested while no runner was running is stale.
	os.Remove(r.p.StopRequest())

	if r.rs, err = state.LoadRunState(r.p.RunState()); err != nil {
		return nil, err
	}
	if r.rs.InFlight != nil {
		if err := r.resume(ctx); err != nil {
			return nil, err
		}
		if ctx.Err() != nil {
			return &Result{Reason: Interrupted, Iterations: r.count, Message: "interrupted"}, nil
		}
	}

	limit := opts.MaxIterations
	for {
		if ctx.Err() != nil {
			return &Result{Reason: Interrupted, Iterations: r.count, Message: "interrupted"}, nil
		}
		if _, err := os.Stat(r.p.StopRequest()); err == nil {
			os.Remove(r.p.StopRequest())
			return &Result{Reason: Stopped, Iterations: r.count, Message: "stopped on request"}, nil
		}
		if err := r.reload(); err != nil {
			return nil, err
		}
		t, err := r.loadTree()
		if err != nil {
			return nil, err
		}
		ix := tree.NewIndex(t)
		if err := r.blockExhausted(t, ix); err != nil {
			return nil, err
		}
		sel := tree.Select(t, ix, r.cfg.Loop.MaxAttempts)
		if res := r.verdict(sel, ix); res != nil {
			res.Iterations = r.count
			return res, nil
		}
		max := limit
		if max <= 0 {
			max = r.cfg.Loop.MaxIterations
		}
		if !opts.Once && r.count >= max {
			return &Result{Reason: MaxIterations, Iterations: r.count,
				Message: fmt.Sprintf("reached max_iterations (%d) with work left; run again to continue", max)}, nil
		}
		if err := r.iterate(ctx, t, ix, sel); err != nil {
			return nil, err
		}
		r.count++
		if ctx.Err() != nil {
			return &Result{Reason: Interrupted, Iterations: r.count, Message: "interrupted"}, nil
		}
		if opts.Once {
			t, err := r.loadTree()
			if err != nil {
				return nil, err
			}
			ix := tree.NewIndex(t)
			sel := tree.Select(t, ix, r.cfg.Loop.MaxAttempts)
			if res := r.verdict(sel, ix); res != nil && res.Reason == Stuck {
				res.Iterations = r.count
				return res, nil
			}
			return &Result{Reason: OnceDone, Iterations: r.count, Message: "ran one iteration"}, nil
		}
	}
}

// verdict returns a final result when the tree is complete or stuck, or
// nil when there is work to do.
func (r *Runner) verdict(sel tree.Selection, ix *tree.Index) *Result {
	if sel.State == tree.Complete {
		return &Result{Reason: Complete, Message: fmt.Sprintf("tree complete: %d of %d tasks done", sel.DoneLeaves, sel.TotalLeaves)}
	}
	if len(sel.Blocked) > 0 && (r.cfg.Loop.OnBlocked == "stop" || sel.State == tree.Stuck) {
		var names []string
		for _, n := range sel.Blocked {
			reason := n.BlockedReason
			if reason == "" {
				reason = "no reason given"
			}
			names = append(names, fmt.Sprintf("%s (%s)", ix.Path(n.ID), reason))
		}
		return &Result{Reason: Stuck, Message: fmt.Sprintf("stuck: blocked: %s; fix the cause, then `runner reset %s` to reopen it",
			strings.Join(names, "; "), sel.Blocked[0].ID)}
	}
	if sel.State == tree.Stuck {
		return &Result{Reason: Stuck, Message: "stuck: no task is selectable (see `runner next`)"}
	}
	return nil
}

func (r *Runner) reload() error {
	cfg, err := config.Load(r.p.Config())
	if err != nil {
		return err
	}
	r.cfg = cfg
	return nil
}

func (r *Runner) loadTree() (*tree.Tree, error) {
	return tree.Load(r.p.Tree())
}

// blockExhausted marks open leaves whose attempts are used up as blocked.
func (r *Runner) blockExhausted(t *tree.Tree, ix *tree.Index) error {
	changed := false
	walk(t.Root, func(n *tree.Node) {
		if n.IsLeaf() && n.EffectiveStatus() == tree.StatusOpen && n.Attempts >= n.AttemptLimit(r.cfg.Loop.MaxAttempts) {
			n.Status = tree.StatusBlocked
			n.BlockedReason = "attempts exhausted"
			changed = true
		}
	})
	if t.Normalize() {
		changed = true
	}
	if !changed {
		return nil
	}
	return tree.Save(r.p.Tree(), t)
}

func walk(n *tree.Node, fn func(*tree.Node)) {
	stack := []*tree.Node{n}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		fn(n)
		for i := len(n.Children) - 1; i >= 0; i-- {
			stack = append(stack, n.Children[i])
		}
	}
}

func (r *Runner) cleanTemps() error {
	dirs := []string{r.p.Dir, r.p.StateDir(), r.p.ContextDir()}
	if last, err := state.LastRun(r.p); err == nil && last > 0 {
		dirs = append(dirs, r.p.RunDir(last))
	}
	for _, d := range dirs {
		removed, err := fsutil.RemoveTemps(d)
		if err != nil {
			return fmt.Errorf("clean temporary files in %s: %w", r.p.Rel(d), err)
		}
		for _, name := range removed {
			r.log.Info("removed leftover temporary file", "file", r.p.Rel(filepath.Join(d, name)))
		}
	}
	return nil
}

// killLeftoverAgent kills the process group a dead runner's agent left.
func (r *Runner) killLeftoverAgent(in *state.InFlight) {
	if in.AgentPGID <= 0 || !proc.GroupAlive(in.AgentPGID) {
		return
	}
	r.log.Warn("killing the agent process group left by a previous runner", "pgid", in.AgentPGID, "iteration", in.Iteration)
	if err := proc.KillGroup(in.AgentPGID, r.cfg.Executor.KillGrace.Duration); err != nil {
		r.log.Error("could not kill the leftover agent", "pgid", in.AgentPGID, "err", err)
	}
}

var errNoNode = errors.New("node no longer in the tree")

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }
