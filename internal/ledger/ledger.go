// Package ledger is the runner's durable record of its iterations: the
// run state (state/run_state.json), the journal (state/journal.jsonl)
// and each iteration's meta.json, with the lock that makes one runner the
// only writer and the keep that puts back what an agent's `git clean`
// removed.
//
// It owns the protocol that makes a runner killed at any instant lose
// nothing: the phases of an iteration (started → agent_done →
// guards_done → recorded, and waiting, aborted), the order of the writes
// that record them, which writes are fsynced and when (BENCHMARKS.md,
// "Durable writes", lists each), the writes made while the agent works,
// and the reading side that a resuming runner and `runner status` use.
// The loop tells it what happened — an iteration begins, its agent
// started, exited, is done, its outcome is recorded — and never names a
// file.
//
// A Ledger is used by one goroutine at a time; the writes it makes in the
// background while an agent works are its own.
package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

// Ledger is the durable record of one repository's iterations, held by
// the one runner that has the repository's lock.
type Ledger struct {
	p   state.Paths
	log *log.Logger

	lock *state.Lock
	// promptKeeper writes the prompt of an iteration under way again
	// (KeepPrompts); nil: none.
	promptKeeper func(n int) error
	// keep is the copy of the state in the git directory (intact.go); nil
	// outside a git repository. keptFloor is the highest iteration number
	// it knew of at start: numbers at or below it are never given again.
	keep      *state.Keep
	keptFloor int

	rs *state.RunState
	// stateDirty says rs holds a change run_state.json does not have yet:
	// the cleared in-flight marker of the last recorded iteration, which
	// the next iteration's marker or Flush writes.
	stateDirty bool
	// onUsage is told of every usage booked (OnUsage).
	onUsage func(state.Usage)
	// journalDirty says the journal has records appended without an fsync.
	journalDirty bool
	// journalMu orders the ledger's appends to the journal (one runs in
	// the background, Begin) with the watch's reading of it (watch.go).
	journalMu sync.Mutex
	watch     journalWatch
	// stateOnDisk says run_state.json exists (checkIntact looks for it).
	stateOnDisk bool
	// written is what the runner last wrote to run_state.json, which an
	// agent must not change (RunStateChanged).
	written []byte
	// resuming is set while an iteration a previous runner left is
	// resolved: its journal line and notes may be there already.
	resuming bool

	// The writes made while the agent works (AgentStarted).
	background       sync.WaitGroup
	backgroundSynced int   // the run folder whose entry they made durable
	backgroundErr    error // the run state's write
	// syncedRun is the run folder whose entry in runs/ is durable.
	syncedRun int

	// keepRuns is loop.keep_runs; runs the run folders pruning knows of,
	// oldest first, nil until listed.
	keepRuns int
	runs     []int
}

// Open takes the repository's lock and puts back what an agent's `git
// clean` removed since the last runner (the keep), so that the person's
// inputs can be checked next. Every file under .runner/ is read and
// written without following a link the agent may have made
// (fsutil.Confine) until Close.
func Open(p state.Paths, logger *log.Logger) (*Ledger, error) {
	if err := fsutil.Confine(p.Dir); err != nil {
		return nil, err
	}
	lock, err := state.AcquireLock(p)
	if err != nil {
		fsutil.Release(p.Dir)
		return nil, err
	}
	l := &Ledger{p: p, log: logger, lock: lock}
	l.openKeep()
	return l, nil
}

// Load reads the run state, once the inputs are known to be good: it
// removes the temporary files a crash left, makes state/ and runs/, and
// makes the journal's entry durable (its started records mark iterations
// under way).
func (l *Ledger) Load() error {
	if err := l.cleanTemps(); err != nil {
		return err
	}
	for _, d := range []string{l.p.StateDir(), l.p.RunsDir()} {
		if err := fsutil.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := ensureDurableFile(l.p.Journal()); err != nil {
		return err
	}
	rs, err := state.LoadRunState(l.p.RunState())
	if err != nil {
		return err
	}
	l.rs = rs
	if _, err := os.Lstat(l.p.RunState()); err == nil {
		l.stateOnDisk = true
	}
	return nil
}

// Close writes what is left for later (Flush, logging a failure) and
// releases the lock.
func (l *Ledger) Close() {
	if l.rs != nil {
		l.FlushOrLog()
	}
	l.lock.Release()
	fsutil.Release(l.p.Dir)
}

// State is the run state as the ledger holds it, newer than
// run_state.json until Flush. The caller only reads it.
func (l *Ledger) State() *state.RunState { return l.rs }

// SetKeepRuns applies loop.keep_runs: the run folders and the journal
// kept (prune.go).
func (l *Ledger) SetKeepRuns(n int) { l.keepRuns = n }

// NextIteration is the number the next iteration gets: never one the run
// state, the keep or a run folder already holds.
func (l *Ledger) NextIteration() int {
	n := max(l.rs.NextIteration(), l.keptFloor+1)
	for {
		if _, err := os.Lstat(l.p.RunDir(n)); errors.Is(err, os.ErrNotExist) {
			return n
		}
		n++ // never reuse a run folder, even one the state does not know
	}
}

// AddUsage adds what a run of the executor named executor reported to
// the totals in the run state, to that executor's, and to task's ("" for
// none: a planning agent's): the run's caps are checked against the
// totals, a task's against its own (SPEC §24). It reaches run_state.json
// with the next save of the in-flight marker, and the meter (OnUsage)
// at once.
func (l *Ledger) AddUsage(executor, task string, u *state.Usage) {
	if u == nil || u.IsZero() {
		return
	}
	l.rs.Usage.Add(*u)
	addTo(&l.rs.UsageByExecutor, executor, *u)
	if task != "" {
		addTo(&l.rs.UsageByTask, task, *u)
	}
	if l.onUsage != nil {
		l.onUsage(*u)
	}
}

// addTo adds u to m[key], making m when it is nil.
func addTo(m *map[string]state.Usage, key string, u state.Usage) {
	if *m == nil {
		*m = map[string]state.Usage{}
	}
	by := (*m)[key]
	by.Add(u)
	(*m)[key] = by
}

// OnUsage has f told of every usage AddUsage adds (package spend's
// meter, which the caps of agents at work count).
func (l *Ledger) OnUsage(f func(state.Usage)) { l.onUsage = f }

// ForgetTaskUsage starts task's spend again from nothing: `runner reset`
// gave it its attempts back, and its caps with them.
func (l *Ledger) ForgetTaskUsage(task string) {
	if _, ok := l.rs.UsageByTask[task]; ok {
		delete(l.rs.UsageByTask, task)
		l.stateDirty = true
	}
}

// AddReviewUsage adds what the reviewer's runs for the verdict in
// meta.Review reported: to the totals, to its task's, and to the
// reviewer's own share, apart from any executor's (state.ReviewLabel),
// even one of the same preset.
func (l *Ledger) AddReviewUsage(meta *state.Meta) {
	if rv := meta.Review; rv != nil {
		l.AddUsage(state.ReviewLabel(rv.Executor), meta.Node, rv.Usage)
	}
}

// CountAgentRun keeps the run state's counts of agent runs in a row that
// failed (loop.max_consecutive_errors), in all and for the executor
// named executor: a failure adds one, a run that finished resets them;
// rate limits and interruptions count neither way.
func (l *Ledger) CountAgentRun(executor string, interruptedOrLimited, failed bool) {
	switch {
	case interruptedOrLimited:
	case failed:
		l.rs.ConsecutiveErrors++
		if l.rs.ExecutorErrors == nil {
			l.rs.ExecutorErrors = map[string]int{}
		}
		l.rs.ExecutorErrors[executor]++
	default:
		l.rs.ConsecutiveErrors = 0
		delete(l.rs.ExecutorErrors, executor)
		if len(l.rs.ExecutorErrors) == 0 {
			l.rs.ExecutorErrors = nil
		}
	}
}

// UseExecutor names the executor the next iteration runs on, for its
// journal records and the run state (`runner status`).
func (l *Ledger) UseExecutor(name string) {
	if l.rs.Executor != name {
		l.rs.Executor = name
		l.stateDirty = true
	}
}

// Executors records the executors of the chain that cannot be used now:
// set aside for the rest of the run, or limited until a time. They
// reach run_state.json with its next save.
func (l *Ledger) Executors(setAside, limited []state.ExecutorNote) {
	if reflect.DeepEqual(setAside, l.rs.SetAside) && reflect.DeepEqual(limited, l.rs.Limited) {
		return
	}
	l.rs.SetAside, l.rs.Limited = setAside, limited
	l.stateDirty = true
}

// Flush makes durable what the ledger left for later: the journal's
// lazily appended records, then the run state held in memory only (the
// cleared in-flight marker). Called before the runner waits, when it
// exits, and after it resolved an iteration a previous runner left, so
// that run_state.json never names an iteration in flight older than one
// recorded after it.
func (l *Ledger) Flush() error {
	l.background.Wait()
	if l.journalDirty {
		if err := fsutil.SyncFile(l.p.Journal()); err != nil {
			// The run state must not get ahead of the journal.
			return fmt.Errorf("make the journal durable: %w", err)
		}
		l.journalDirty = false
	}
	if !l.stateDirty {
		return nil
	}
	return l.saveState(fsutil.Durable)
}

// FlushOrLog is Flush where a failure can only be reported. A nil
// Ledger has nothing to flush.
func (l *Ledger) FlushOrLog() {
	if l == nil {
		return
	}
	if err := l.Flush(); err != nil {
		l.log.Error("save the run state", "err", err)
	}
}

// saveState replaces run_state.json with the run state in memory, as
// durably as d says.
func (l *Ledger) saveState(d fsutil.Durability) error {
	l.background.Wait() // one writer at a time (AgentStarted)
	data, err := state.EncodeRunState(l.rs)
	if err != nil {
		return fmt.Errorf("encode %s: %w", l.p.RunState(), err)
	}
	if err := state.WriteRunState(l.p.RunState(), data, d); err != nil {
		return err
	}
	l.stateDirty, l.stateOnDisk = false, true
	l.written = data
	return nil
}

// RunStateChanged reports whether run_state.json holds something other
// than what the ledger last wrote (an agent's edit), after the agent
// exited: it returns the file's content then, and writes the run state
// back from memory.
func (l *Ledger) RunStateChanged() ([]byte, error) {
	l.background.Wait()
	if l.written == nil {
		return nil, nil
	}
	data, err := fsutil.ReadLimited(l.p.RunState(), 16<<20, false)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // put back by checkIntact already
	}
	if err == nil && state.SameRunState(data, l.written) {
		return nil, nil
	}
	l.log.Warn("run_state.json was changed while the agent worked; writing it again from memory")
	if err := l.saveState(fsutil.Durable); err != nil {
		return data, err
	}
	return data, nil
}

// cleanTemps removes the temporary files a runner that died left behind:
// in .runner/, state/, context/, and the folders of the iterations it may
// have been writing in (the last one, and the one run_state.json names in
// flight, which may be the one before it).
func (l *Ledger) cleanTemps() error {
	var runs []int
	last, err := state.LastRun(l.p)
	if err == nil && last > 0 {
		runs = append(runs, last)
	}
	if rs, err := state.LoadRunState(l.p.RunState()); err == nil {
		for _, f := range rs.Flights() {
			runs = append(runs, f.Iteration)
		}
		// With parallel slots, iterations a dead runner began may be
		// known to the journal only.
		if recs, err := state.UnfinishedStarts(l.p.Journal(), rs.LastKnown()); err == nil {
			for _, rec := range recs {
				runs = append(runs, rec.Iteration)
			}
		}
	}
	slices.Sort(runs)
	dirs := []string{l.p.Dir, l.p.StateDir(), l.p.ContextDir(), l.p.BaselinesDir(), l.p.PreflightDir()}
	for _, n := range slices.Compact(runs) {
		// A run folder's own folders (the review's, the integration's)
		// are written the same way.
		dirs = append(dirs, l.p.RunDir(n))
		entries, _ := os.ReadDir(l.p.RunDir(n))
		for _, e := range entries {
			if e.IsDir() {
				dirs = append(dirs, filepath.Join(l.p.RunDir(n), e.Name()))
			}
		}
	}
	for _, d := range dirs {
		removed, err := fsutil.RemoveTemps(d)
		if err != nil {
			return fmt.Errorf("clean temporary files in %s: %w", l.p.Rel(d), err)
		}
		for _, name := range removed {
			l.log.Info("removed leftover temporary file", "file", l.p.Rel(filepath.Join(d, name)))
		}
	}
	return nil
}

// ensureDurableFile creates an empty file at path, with its entry in its
// folder made durable, unless the file exists.
func ensureDurableFile(path string) error {
	if _, err := os.Lstat(path); err == nil {
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
