package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
)

// Outcome is an iteration whose outcome is decided, as Record writes it.
type Outcome struct {
	// Meta is the iteration with its outcome, the node's status and
	// attempts as applied (Outcome, NodeStatus, Attempts).
	Meta *state.Meta
	// LastStatus and LastSummary are what the run state keeps of it for
	// the next iteration's context (history.md).
	LastStatus, LastSummary string
	// Tree writes the outcome into tree.json; nil when there is nothing
	// to write (the node was removed meanwhile).
	Tree TreeWrite
	// Assumptions and Questions are appended to the notes files, once.
	Assumptions, Questions []string
	// JournalSummary is the journal line's summary, one bounded line.
	JournalSummary string
	// LastGuard is run_state.last_guard when it is not Meta.Guard: "fail"
	// after a rejection, so that the next attempt's failure.md holds the
	// reviewer's reasons.
	LastGuard string
}

// Death notes that the runner pid, in its life (state.Life), died while
// node's agent worked and reports whether the interruption spends an
// attempt (state.RunState.Death); the note reaches run_state.json with
// its next write.
func (l *Ledger) Death(pid int, life, node string) (charged bool) {
	charged = l.rs.Death(pid, life, node)
	l.stateDirty = true
	return charged
}

// DeathOf notes again the runner's death that interrupted meta's
// iteration, when it was one (meta.RunnerDied): a runner that died while
// recording that iteration may not have saved the note, and the next one
// records the iteration from meta.json (SPEC §8: every death is noted
// once, whichever phase its iterations are resumed from). Noting the
// same death again changes nothing.
func (l *Ledger) DeathOf(meta *state.Meta) {
	if meta.Outcome == state.OutcomeInterrupted && meta.RunnerDied > 0 {
		l.Death(meta.RunnerDied, meta.RunnerDiedLife, meta.Node)
	}
}

// Owned returns the runner-owned fields of the tasks as the runner last
// set them (nil before it first saw a tree); the map is the ledger's.
func (l *Ledger) Owned() map[string]state.Owned { return l.rs.Owned }

// Own records a task's runner-owned fields as set by the runner now. They
// reach run_state.json with its next write: an outcome's with the
// iteration's record, which a crash before it makes the next runner
// record again.
func (l *Ledger) Own(id, status string, attempts int, blockedReason string) {
	if l == nil || l.rs == nil {
		return // a tree written outside a run (tests)
	}
	if l.rs.Owned == nil {
		l.rs.Owned = map[string]state.Owned{}
	}
	l.rs.Owned[id] = state.Owned{Status: status, Attempts: attempts, BlockedReason: blockedReason, At: time.Now().UTC()}
	l.stateDirty = true
}

// StartOwning starts the record of runner-owned fields, empty.
func (l *Ledger) StartOwning() {
	if l.rs.Owned == nil {
		l.rs.Owned = map[string]state.Owned{}
		l.stateDirty = true
	}
}

// ForgetOwned drops the tasks no longer in the tree.
func (l *Ledger) ForgetOwned(keep func(id string) bool) {
	for id := range l.rs.Owned {
		if !keep(id) {
			delete(l.rs.Owned, id)
			l.stateDirty = true
		}
	}
}

// Checkpoint records the run branch and its last checkpoint in the run
// state; it reaches run_state.json with the next save.
func (l *Ledger) Checkpoint(branch, commit string) {
	if l.rs.Branch != branch || l.rs.Checkpoint != commit {
		l.rs.Branch, l.rs.Checkpoint = branch, commit
		l.stateDirty = true
	}
}

// Preflight is the last preflight that passed, as the run state holds it;
// nil when none is known. The caller only reads it.
func (l *Ledger) Preflight() *state.Preflight { return l.rs.Preflight }

// SetPreflight records the preflight that passed (nil forgets it). Like
// Checkpoint it reaches run_state.json with the next save of the run
// state (the next iteration's in-flight marker, or Flush when the runner
// exits), not durably at once: a crash before that loses only the cache,
// and the next run runs the guards again.
func (l *Ledger) SetPreflight(p *state.Preflight) {
	l.rs.Preflight = p
	l.stateDirty = true
}

// TreeWrite is how Record writes an outcome into tree.json, in two
// steps so that the slow part runs while meta.json is made durable.
type TreeWrite interface {
	// Prepare encodes the new tree and writes it, fsynced, to a
	// temporary file beside tree.json.
	Prepare() error
	// Commit gives the prepared file its name. When a person saved
	// tree.json meanwhile, it applies the outcome to their version
	// instead; metaChanged says the outcome then came out differently
	// (Meta was updated).
	Commit() (metaChanged bool, err error)
	// Abort removes the prepared file.
	Abort()
}

// Record writes a decided outcome, in this order, each write durable
// before the next: meta.json (phase recorded), tree.json, the notes, the
// journal line, and last the run state, whose cleared in-flight marker
// says the iteration is recorded. The cleared marker is not written
// here: the next iteration's started marker (a durable write of the
// whole run state) or Flush writes it. Until then run_state.json still
// names the iteration in flight, and a runner started after a crash
// meanwhile records it again from meta.json — which holds everything the
// agent and the guards produced — and that changes nothing a second
// time: the tree gets the same absolute values, the notes and the
// journal line are written only if they are missing. So the outcome is
// applied exactly once. BENCHMARKS.md ("Durable writes") lists each
// write and why it is, or is not, fsynced.
func (l *Ledger) Record(o Outcome) error {
	meta := o.Meta
	// With parallel slots iterations end out of order: iteration stays
	// the highest finished.
	l.rs.Iteration = max(l.rs.Iteration, meta.Iteration)
	l.rs.LastIteration = meta.Iteration
	l.rs.LastNode = meta.Node
	l.rs.LastGuard = meta.Guard
	if o.LastGuard != "" {
		l.rs.LastGuard = o.LastGuard
	}
	if l.rs.LastGuard == "" {
		l.rs.LastGuard = state.GuardSkipped
	}
	l.rs.LastStatus, l.rs.LastSummary = o.LastStatus, o.LastSummary
	if meta.Slot > 0 {
		// Each slot's next attempt at a task is told of that task's last
		// iteration, whatever other slots recorded since.
		if l.rs.LastOf == nil {
			l.rs.LastOf = map[string]state.Last{}
		}
		if meta.NodeStatus == "done" || meta.NodeStatus == "" {
			delete(l.rs.LastOf, meta.Node)
		} else {
			l.rs.LastOf[meta.Node] = state.Last{Iteration: meta.Iteration, Status: l.rs.LastStatus, Summary: l.rs.LastSummary, Guard: l.rs.LastGuard}
		}
	}

	if meta.FinishedAt == nil {
		finished := time.Now().UTC()
		meta.FinishedAt = &finished
		meta.DurationMS = finished.Sub(meta.StartedAt).Milliseconds()
	}
	meta.Phase = state.PhaseRecorded
	// meta.json must be durable before tree.json takes its new content;
	// the tree is encoded and written to its temporary file meanwhile,
	// and renamed only once meta.json is on disk.
	metaSaved := make(chan error, 1)
	go func() { metaSaved <- l.saveMetaDurably(meta) }()
	var treeErr error
	if o.Tree != nil {
		treeErr = o.Tree.Prepare()
	}
	if err := errors.Join(<-metaSaved, treeErr); err != nil {
		if o.Tree != nil {
			o.Tree.Abort()
		}
		return err
	}
	if o.Tree != nil {
		changed, err := o.Tree.Commit()
		if err != nil {
			return err
		}
		if changed {
			if err := state.SaveMetaAs(l.p.RunDir(meta.Iteration), meta, fsutil.NotSynced); err != nil {
				return err
			}
		}
	}
	if err := l.notesOnce(l.p.Assumptions(), "Assumptions", meta, o.Assumptions); err != nil {
		return err
	}
	if err := l.notesOnce(l.p.Questions(), "Open Questions", meta, o.Questions); err != nil {
		return err
	}
	if rv := meta.Review; rv != nil && meta.Outcome == state.OutcomeRejected {
		// Before the recorded line, with the same guarantee: counted by
		// Rejections, it must be there exactly once.
		if err := l.journalOnce(state.Record{Iteration: meta.Iteration, Node: meta.Node, Event: state.EventRejected,
			Verdict: rv.Verdict, Executor: rv.Executor, Attempts: meta.Attempts, Summary: textfmt.OneLine(strings.Join(rv.Reasons, "; "), 300)}); err != nil {
			return err
		}
	}
	event := state.EventRecorded
	if meta.Outcome == state.OutcomeInterrupted {
		event = state.EventInterrupted
	}
	rung := 0
	if meta.Rung != nil {
		rung = meta.Rung.N
	}
	if err := l.journalOnce(state.Record{Iteration: meta.Iteration, Node: meta.Node, Event: event, AgentStatus: meta.AgentStatus,
		Guard: meta.Guard, Outcome: meta.Outcome, NodeStatus: meta.NodeStatus, Attempts: meta.Attempts, NoAttempt: meta.NoAttempt,
		Summary: o.JournalSummary, Executor: meta.Executor, Rung: rung, CostCap: meta.CostCap,
		Tests: state.Tally(meta.Guards), Checks: state.Tally(ownChecks(meta)), ChecksBefore: meta.ChecksBefore}); err != nil {
		return err
	}
	l.rs.EndFlight(meta.Iteration)
	l.stateDirty = true
	l.pruneRuns(meta.Iteration)
	return nil
}

// notesOnce appends items to a notes file. When resuming, a crash may
// have come between appending and recording: items whose line is already
// in the file in full are not appended again, and a line the crash tore
// is cut off and appended again in full.
func (l *Ledger) notesOnce(path, heading string, meta *state.Meta, items []string) error {
	if len(items) == 0 {
		return nil
	}
	if l.resuming {
		data, err := fsutil.ReadFile(path)
		if errors.Is(err, fsutil.ErrSymlink) || errors.Is(err, fsutil.ErrNotRegular) {
			data, err = nil, nil // not the runner's own file: the append replaces it
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("read %s: %w", l.p.Rel(path), err)
		}
		have := map[string]bool{}
		for _, line := range strings.SplitAfter(string(data), "\n") {
			have[line] = strings.HasSuffix(line, "\n")
		}
		var missing []string
		torn := string(data[bytes.LastIndexByte(data, '\n')+1:])
		cut := false
		for _, it := range items {
			lines := state.NoteLines(meta.Iteration, meta.Node, []string{it})
			if len(lines) == 1 && !have[lines[0]] {
				missing = append(missing, it)
				// A last line without its newline that begins one of these
				// lines is this runner's own append, torn by the crash.
				cut = cut || (torn != "" && strings.HasPrefix(lines[0], torn))
			}
		}
		items = missing
		if cut {
			if err := fsutil.Truncate(path, int64(len(data)-len(torn))); err != nil {
				return fmt.Errorf("cut a torn line off %s: %w", l.p.Rel(path), err)
			}
		}
	}
	return state.AppendNotes(path, heading, meta.Iteration, meta.Node, items)
}

// ownChecks are the results of the checks of meta's task itself (not of
// a parent whose last open task it was).
func ownChecks(meta *state.Meta) []state.GuardMeta {
	var out []state.GuardMeta
	for _, c := range meta.Checks {
		if c.Node == meta.Node {
			out = append(out, c)
		}
	}
	return out
}
