package ledger

import (
	"fmt"
	"os"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

// Begin marks iteration n on node as under way. Its durable mark is the
// journal's started record, one append and one fsync, which also makes
// durable the records appended lazily before it (the previous
// iteration's recorded line). From then on a crash leaves the iteration
// for the next runner to resolve, and its number is never given again.
// run_state.json gets the in-flight marker while the agent works
// (AgentStarted); a runner that starts after a crash reads the journal for
// a started iteration the run state does not know of.
//
// The append runs in the background so that the caller can build the
// prompt meanwhile; nothing of the iteration outside context/ may be
// written before wait returns nil. When wait returns an error the
// iteration is not under way: the record did not reach the disk.
//
// slot is the parallel slot the iteration works in (SPEC §14), 0 without
// slots; several iterations may be under way at once, one per slot.
func (l *Ledger) Begin(n int, node string, attempts, slot int) (startedAt time.Time, wait func() error) {
	if err := l.rotateJournal(); err != nil {
		return time.Time{}, func() error { return err }
	}
	start := time.Now().UTC()
	l.rs.AddFlight(&state.InFlight{Iteration: n, Node: node, Phase: state.PhaseStarted, RunnerPID: os.Getpid(), RunnerLife: state.Life(), StartedAt: start, Slot: slot, Executor: l.rs.Executor})
	l.stateDirty = true
	rec := state.Record{Time: start, Iteration: n, Node: node, Event: state.EventStarted, Attempts: attempts, RunnerPID: os.Getpid(), RunnerLife: state.Life(), Executor: l.rs.Executor, Slot: slot}
	done := make(chan error, 1)
	go func() { done <- l.appendJournal(rec, fsutil.Durable) }()
	return start, func() error {
		if err := <-done; err != nil {
			l.rs.EndFlight(n)
			return err
		}
		l.journalDirty = false
		return nil
	}
}

// JudgesRunnerFiles marks iteration n as one whose agent can reach
// .runner/ (state.InFlight.JudgesRunnerFiles), from the next save of the
// in-flight marker on.
func (l *Ledger) JudgesRunnerFiles(n int) {
	if f := l.rs.Flight(n); f != nil {
		f.JudgesRunnerFiles = true
	}
}

// WorkerStarted notes that iteration n runs on worker (SPEC §22), as
// AgentStarted does for a local agent.
func (l *Ledger) WorkerStarted(n int, worker string) {
	l.background.Wait()
	if f := l.rs.Flight(n); f != nil {
		f.Worker = worker
	}
	l.AgentStarted(n, 0)
}

// AgentStarted notes that the agent of iteration n started, in process
// group pgid, and starts in the background the writes that may wait until
// it is done, so that their time is spent while it works:
//
//   - run_state.json, durably, with the in-flight marker and the agent's
//     process group, so that a runner started after a crash of this one
//     can stop an agent this one leaves behind. It also replaces the
//     previous iteration's marker, which Record clears in memory only. It
//     is written as the run state is now, encoded before this returns.
//   - the fsync of runs/, which makes the new run folder's entry durable
//     before meta.json is first made durable in it.
//   - the keep in the git directory, brought up to date: the agent may
//     remove what it does not hold yet.
//
// With parallel slots, the writes another slot's agent started are waited
// for first: run_state.json and the keep have one writer at a time.
func (l *Ledger) AgentStarted(n, pgid int) {
	l.background.Wait()
	if f := l.rs.Flight(n); f != nil {
		f.AgentPGID = pgid
	}
	// Encoded now: with parallel slots the run state changes while it is
	// written. The copy only keeps the stamp of the time off l.rs.
	snap := *l.rs
	data, encErr := state.EncodeRunState(&snap)
	upTo := keepUpTo(l.rs)
	if l.syncedRun != n {
		l.background.Go(func() {
			if err := fsutil.SyncDir(l.p.RunsDir()); err != nil {
				l.log.Error("make the run folder durable", "err", err)
			} else {
				l.backgroundSynced = n
			}
		})
	}
	l.stateOnDisk = true
	l.background.Go(func() {
		if encErr != nil {
			l.backgroundErr = fmt.Errorf("encode %s: %w", l.p.RunState(), encErr)
		} else if l.backgroundErr = state.WriteRunState(l.p.RunState(), data, fsutil.Durable); l.backgroundErr == nil {
			l.written = data
		}
		l.syncKeepUpTo(upTo)
	})
}

// AgentExited waits for the writes AgentStarted made, after putting back
// what the agent removed of the runner's files (checkIntact). When the
// run state could not be written, it tries once more and otherwise
// fails: the iteration must not be recorded while run_state.json still
// names an earlier one in flight, which a runner resuming after a crash
// would record again over this one's outcome.
func (l *Ledger) AgentExited(n int) error {
	l.background.Wait()
	if err := l.checkIntact(n); err != nil {
		return err
	}
	if l.backgroundSynced != 0 {
		l.syncedRun, l.backgroundSynced = l.backgroundSynced, 0
	}
	if l.backgroundErr == nil {
		return nil
	}
	l.log.Warn("could not record the iteration in flight in the run state; trying again", "err", l.backgroundErr)
	l.backgroundErr = nil
	return l.saveState(fsutil.Durable)
}

// Waiting records, before the runner waits out a usage or rate limit,
// that the agent hit one (meta.json in phase waiting, durably, then the
// journal's rate_limited record): a runner stopped while it waits spends
// no attempt. The iteration's next agent run begins when the executor
// marks it in executor.log.
func (l *Ledger) Waiting(meta *state.Meta, rec state.Record) error {
	meta.Phase = state.PhaseWaiting
	if err := state.SaveMeta(l.p.RunDir(meta.Iteration), meta); err != nil {
		return err
	}
	rec.Iteration, rec.Node, rec.Event, rec.Executor = meta.Iteration, meta.Node, state.EventRateLimited, meta.Executor
	return l.journal(rec)
}

// AgentDone records that the agent is done: meta.json holds its results
// and its message. Before guards run (they may take minutes) the phase is
// made durable, meta.json then the in-flight marker, so that a crash
// meanwhile runs the guards only, not the agent. When nothing runs
// before the outcome is recorded, only the journal line is written:
// recording starts with a durable meta.json, which a resuming runner
// reads ahead of the marker.
func (l *Ledger) AgentDone(meta *state.Meta, guardsNext bool) error {
	meta.Phase = state.PhaseAgentDone
	if guardsNext {
		return l.advance(meta, state.EventAgentDone)
	}
	return l.journalLazy(phaseRecord(meta, state.EventAgentDone))
}

// GuardsStarting brings the keep up to date before the guards run: they
// run in the repository too (a `make clean` may remove what the runner
// holds).
func (l *Ledger) GuardsStarting() {
	l.background.Wait()
	l.syncKeep(l.rs)
}

// GuardsEnded puts back what the guards removed of the runner's files.
func (l *Ledger) GuardsEnded(n int) error { return l.checkIntact(n) }

// GuardsDone records the guards' results. After guards that ran, the
// phase is made durable as after the agent (a crash does not run them
// again); when none ran, recording follows at once (see AgentDone).
func (l *Ledger) GuardsDone(meta *state.Meta, ran bool) error {
	meta.Phase = state.PhaseGuardsDone
	if ran {
		return l.advance(meta, state.EventGuardsDone)
	}
	return l.journalLazy(phaseRecord(meta, state.EventGuardsDone))
}

// SaveResults makes the results meta holds durable, with the in-flight
// marker at its phase, before a wait that may last (a tree.json to be
// fixed before the outcome can be recorded into it): an interrupted wait
// loses nothing.
func (l *Ledger) SaveResults(meta *state.Meta) error { return l.commitPhase(meta) }

// SetAside ends an iteration without an outcome and without spending an
// attempt (the agent could not be started, a wait was interrupted, the
// runner's own I/O failed before the agent ran): meta.json in phase
// aborted saying why, nothing left in flight, an aborted journal record.
// The usage of the agent runs it had is added to the totals.
func (l *Ledger) SetAside(meta *state.Meta, note string, cause error) error {
	meta.Phase = state.PhaseAborted
	meta.Note = note
	if err := state.SaveMeta(l.p.RunDir(meta.Iteration), meta); err != nil {
		return err
	}
	// The journal's record before the marker goes: a runner that dies in
	// between finds the iteration still in flight, its meta.json aborted,
	// and ends it again (EndResumed) without a second record. The other
	// way round, with parallel slots, an iteration older than one already
	// finished would be left with no record ending it, and no marker to
	// find it by.
	if err := l.journal(state.Record{Iteration: meta.Iteration, Node: meta.Node, Event: state.EventAborted, Error: cause.Error(), Usage: meta.Usage, Executor: meta.Executor}); err != nil {
		return err
	}
	l.rs.EndFlight(meta.Iteration)
	l.AddUsage(meta.Executor, meta.Node, meta.Usage)
	return l.saveState(fsutil.Durable)
}

// EndResumed sets aside an iteration a previous runner left without an
// agent at work (it stopped before the agent started, or while it waited
// out a rate limit), as SetAside does, its usage already counted when it
// was resumed. Written again after a crash, it writes its journal line
// once.
func (l *Ledger) EndResumed(meta *state.Meta, note string) error {
	meta.Phase = state.PhaseAborted
	meta.Note = note
	if err := state.SaveMeta(l.p.RunDir(meta.Iteration), meta); err != nil {
		return err
	}
	if err := l.journalOnce(state.Record{Iteration: meta.Iteration, Node: meta.Node, Event: state.EventAborted, Error: note, Executor: meta.Executor}); err != nil {
		return err
	}
	l.rs.EndFlight(meta.Iteration)
	return l.saveState(fsutil.Durable)
}

// advance moves the iteration to meta.Phase, durably (commitPhase), then
// appends its journal line, which the journal's next fsync makes durable.
func (l *Ledger) advance(meta *state.Meta, event string) error {
	if err := l.commitPhase(meta); err != nil {
		return err
	}
	return l.journalLazy(phaseRecord(meta, event))
}

// commitPhase makes the phase meta has reached durable: meta.json, then
// the in-flight marker.
func (l *Ledger) commitPhase(meta *state.Meta) error {
	if err := l.saveMetaDurably(meta); err != nil {
		return err
	}
	if f := l.rs.Flight(meta.Iteration); f != nil {
		f.Phase = meta.Phase
	}
	return l.saveState(fsutil.Durable)
}

// saveMetaDurably writes meta.json durably, and the first time for an
// iteration also the run folder's own entry in runs/, which was created
// without an fsync.
func (l *Ledger) saveMetaDurably(meta *state.Meta) error {
	if l.syncedRun != meta.Iteration {
		if err := fsutil.SyncDir(l.p.RunsDir()); err != nil {
			return err
		}
		l.syncedRun = meta.Iteration
	}
	return state.SaveMeta(l.p.RunDir(meta.Iteration), meta)
}

// phaseRecord is the journal record of an iteration reaching a phase.
func phaseRecord(meta *state.Meta, event string) state.Record {
	rec := state.Record{Iteration: meta.Iteration, Node: meta.Node, Event: event, Phase: meta.Phase, AgentStatus: meta.AgentStatus, Guard: meta.Guard, Executor: meta.Executor}
	if meta.Agent != nil {
		rec.AgentClass = meta.Agent.Class
		rec.Error = meta.Agent.Error
		rec.Evidence = meta.Agent.Evidence
	}
	if event == state.EventGuardsDone {
		rec.Digest = state.VerdictDigest(meta)
	}
	if event == state.EventAgentDone {
		rec.Usage = meta.Usage
	}
	return rec
}
