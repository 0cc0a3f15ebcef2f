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
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
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
	// Watch keeps the run going when the tree is complete or stuck: it
	// waits for tree.json or config.toml to change instead of returning.
	Watch    bool
	Progress io.Writer // one line per iteration
	// Notices receives what a person steering the run needs to know: that
	// it is waiting and why, and edits that do not load. Default: Progress.
	Notices io.Writer
	Log     *log.Logger
}

// Runner is one run of the loop over one repository.
type Runner struct {
	opts  Options
	p     state.Paths
	log   *log.Logger
	cfg   *config.Config
	rs    *state.RunState
	count int

	lock *state.Lock
	// keep is the copy of the state in the git directory (intact.go); nil
	// outside a git repository.
	keep *state.Keep
	// keptFloor is the highest iteration number the keep knew of at
	// start: numbers at or below it are never given again.
	keptFloor int

	resuming bool // resolving an iteration a previous runner left in flight
	// stateDirty says rs holds a change run_state.json does not have yet
	// (see record and flushState).
	stateDirty bool
	// journalDirty says the journal has records appended without an fsync.
	journalDirty bool
	// stateOnDisk says run_state.json exists (checkIntact).
	stateOnDisk bool

	// Writes done while the agent works (iterate.go, whileAgentRuns).
	background       sync.WaitGroup
	backgroundSynced int   // the run folder whose entry they made durable
	backgroundErr    error // the run state's write

	cache runCache // work kept between iterations (record.go)

	// ctx is the run's context, for the waits inside recording.
	ctx context.Context
	// seen is config.toml and tree.json as the runner last read or wrote
	// them; a wait ends when the files differ from it.
	seen         inputs
	recheck      time.Duration // waits re-check inputs this often; 0: recheckWatching
	invalid      string        // the invalid-input report last printed
	invalidFiles string        // the files it named
	waiting      string        // why the run last said it was waiting
}

// Run takes the lock, resolves an iteration a previous runner left in
// flight, and loops until the tree is complete, stuck, the iteration
// limit is reached, a stop is requested, or ctx is cancelled. With
// opts.Watch a complete or stuck tree does not end the run: it waits for
// tree.json or config.toml to change.
//
// config.toml and tree.json are re-read at every iteration boundary. The
// first read is strict (a broken input is an error and nothing is
// touched); after that, an input that does not load is reported on
// opts.Notices, left as it is, and waited out, as is a tree.json that
// does not load when an iteration's outcome is to be recorded into it.
// Every wait also ends on `runner stop` (Stopped) and on ctx (Interrupted).
func Run(ctx context.Context, opts Options) (res *Result, err error) {
	defer func() { err = withIOHint(err) }()
	if opts.Log == nil {
		opts.Log = log.New(io.Discard)
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.Notices == nil {
		opts.Notices = opts.Progress
	}
	r := &Runner{opts: opts, p: opts.Paths, log: opts.Log, ctx: ctx}

	// Every file under .runner/ is read and written without following a
	// symbolic link the agent may have made (fsutil.Confine).
	if err := fsutil.Confine(r.p.Dir); err != nil {
		return nil, err
	}
	defer fsutil.Release(r.p.Dir)
	lock, err := state.AcquireLock(r.p)
	if err != nil {
		return nil, err
	}
	r.lock = lock
	defer func() { r.lock.Release() }()
	// What an agent's `git clean -fdx` of an earlier run removed comes
	// back first (intact.go), so that a broken config or tree is refused
	// before anything is touched, but a missing one is not.
	r.openKeep()
	if err := r.reload(); err != nil {
		return nil, err
	}
	if _, err := r.loadTree(); err != nil {
		return nil, err
	}
	defer r.flushStateOrLog() // record.go: the last recorded iteration's cleared marker

	if err := r.cleanTemps(); err != nil {
		return nil, err
	}
	if err := fsutil.MkdirAll(r.p.StateDir(), 0o755); err != nil {
		return nil, err
	}
	if err := fsutil.MkdirAll(r.p.RunsDir(), 0o755); err != nil {
		return nil, err
	}
	// The journal's started records mark iterations under way, so the
	// journal's own entry in state/ must be durable before the first one.
	if err := ensureDurableFile(r.p.Journal()); err != nil {
		return nil, err
	}
	// A stop requested while no runner was running is stale.
	fsutil.Remove(r.p.StopRequest())

	if r.rs, err = state.LoadRunState(r.p.RunState()); err != nil {
		return nil, err
	}
	if _, err := os.Lstat(r.p.RunState()); err == nil {
		r.stateOnDisk = true
	}
	// Resolve what a previous runner left in flight: the iteration
	// run_state.json names, then one only the journal knows of (see
	// resumeFromJournal). Each is made durable before the next, so that
	// an older in-flight marker is never resolved after a newer iteration
	// was recorded.
	for _, resume := range []func(context.Context) error{r.resumeFromState, r.resumeFromJournal} {
		err := resume(ctx)
		if err == nil {
			err = r.flushState()
		}
		if err != nil {
			return r.failed(ctx, err)
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
		if consumeStop(r.p) {
			return &Result{Reason: Stopped, Iterations: r.count, Message: "stopped on request"}, nil
		}
		if err := r.checkIntact(0); err != nil {
			return nil, err
		}
		t, ok := r.loadInputs(ctx)
		if !ok {
			continue // a stop or an interruption, seen at the top
		}
		ix := tree.NewIndex(t)
		settled, err := r.settleAttempts(t)
		if err != nil {
			return nil, err
		}
		if !settled {
			continue // the tree changed on disk meanwhile: read it again
		}
		sel := tree.Select(t, ix, r.cfg.Loop.MaxAttempts)
		if res := r.verdict(sel, ix); res != nil {
			res.Iterations = r.count
			if !opts.Watch {
				return res, nil
			}
			r.waitWatching(ctx, res.Message)
			continue
		}
		if r.waiting != "" {
			r.waiting = ""
			fmt.Fprintf(r.opts.Notices, "runner: going on with %s\n", inert.Line(sel.Path))
		}
		max := limit
		if max <= 0 {
			max = r.cfg.Loop.MaxIterations
		}
		if !opts.Once && r.count >= max {
			return &Result{Reason: MaxIterations, Iterations: r.count,
				Message: fmt.Sprintf("reached max_iterations (%d) with work left; run again to continue", max)}, nil
		}
		if res := r.budgetExceeded(); res != nil {
			return res, nil
		}
		if err := r.iterate(ctx, t, ix, sel); err != nil {
			return r.failed(ctx, err)
		}
		r.count++
		if ctx.Err() != nil {
			return &Result{Reason: Interrupted, Iterations: r.count, Message: "interrupted"}, nil
		}
		if opts.Once {
			t, err := r.loadTree()
			if err != nil {
				// The iteration is recorded; whether the tree is stuck
				// cannot be told until the person fixes it.
				r.log.Warn("cannot tell whether the tree is stuck", "err", err)
				return &Result{Reason: OnceDone, Iterations: r.count, Message: "ran one iteration"}, nil
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

// failed turns an error that ended an iteration into the run's end: a
// stop asked or an interruption while waiting for a fix ends the run like
// one at a boundary; anything else is an error.
func (r *Runner) failed(ctx context.Context, err error) (*Result, error) {
	if errors.Is(err, errStopWhileWaiting) {
		consumeStop(r.p)
		return &Result{Reason: Stopped, Iterations: r.count, Message: "stopped on request: " + err.Error()}, nil
	}
	if ctx.Err() != nil {
		return &Result{Reason: Interrupted, Iterations: r.count, Message: "interrupted: " + err.Error()}, nil
	}
	return nil, err
}

// withIOHint adds to a failure of the runner's own I/O what a person can
// do about it. Such a failure never costs the task an attempt: the
// iteration it interrupted is retried, or its saved result recorded.
func withIOHint(err error) error {
	var hint string
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		hint = "the disk is full: free some space"
	case errors.Is(err, syscall.EROFS):
		hint = "the file system is read-only: remount it read-write"
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		hint = "the runner may not write there: give it back write access"
	default:
		return err
	}
	return fmt.Errorf("%w\n%s, then run `runner run` again; no task loses an attempt to this", err, hint)
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
			reason := inert.Line(n.BlockedReason) // printed as a one-line field
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
	t, _, err := r.cache.trees.load(r.p.Tree())
	return t, err
}

// reasonExhausted is the blocked_reason of a leaf whose attempts are used up.
const reasonExhausted = "attempts exhausted"

// settleAttempts brings the leaves' status in line with their attempt
// limits, which a person may have changed: an open leaf whose attempts are
// used up becomes blocked, and a leaf blocked only because its attempts
// were used up opens again once its limit (max_attempts, or
// loop.max_attempts) is raised above them. It saves the tree only if
// tree.json still holds what was read; otherwise it reports false and the
// caller reads the person's newer version instead of overwriting it.
func (r *Runner) settleAttempts(t *tree.Tree) (bool, error) {
	changed := false
	walk(t.Root, func(n *tree.Node) {
		if !n.IsLeaf() {
			return
		}
		limit := n.AttemptLimit(r.cfg.Loop.MaxAttempts)
		switch {
		case n.EffectiveStatus() == tree.StatusOpen && n.Attempts >= limit:
			n.Status = tree.StatusBlocked
			n.BlockedReason = reasonExhausted
			changed = true
		case n.Status == tree.StatusBlocked && n.BlockedReason == reasonExhausted && n.Attempts < limit:
			n.Status = ""
			n.BlockedReason = ""
			changed = true
			r.log.Info("reopening a task whose attempt limit was raised", "node", n.ID, "attempts", n.Attempts, "max_attempts", limit)
		}
	})
	if t.Normalize() {
		changed = true
	}
	if !changed {
		return true, nil
	}
	if sumFile(r.p.Tree()) != r.seen.tree {
		return false, nil
	}
	if err := tree.Save(r.p.Tree(), t); err != nil {
		return false, err
	}
	r.seen.tree = sumBytes(tree.Marshal(t))
	return true, nil
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
	// Only the folders of iterations a runner may have been writing in
	// when it died: the last one, and the one run_state.json names in
	// flight, which may be the one before it (see resumeFromJournal).
	last, err := state.LastRun(r.p)
	if err == nil && last > 0 {
		dirs = append(dirs, r.p.RunDir(last))
	}
	if rs, err := state.LoadRunState(r.p.RunState()); err == nil && rs.InFlight != nil && rs.InFlight.Iteration != last {
		dirs = append(dirs, r.p.RunDir(rs.InFlight.Iteration))
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

// ensureDurableFile creates an empty file at path, with its entry in its
// folder made durable, unless the file exists.
func ensureDurableFile(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	f, err := fsutil.OpenAppend(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return fsutil.SyncDir(filepath.Dir(path))
}
