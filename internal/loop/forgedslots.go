package loop

import (
	"os"
	"path/filepath"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/outcome"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
	"github.com/runner-cli/runner/internal/verify"
)

// Slots whose programs run unconfined (sandbox.mode = "off", or no
// Landlock) reach the runner's files while other slots write them: the
// journal and tree.json cannot be compared as a whole after an agent ran,
// as they are without slots (lane.Local.Judged). Two forgeries would still make a
// task done without running it: a `skipped` record appended to the
// journal, and the task's status in tree.json. So from the moment an
// iteration begins in such a slot while none other is under way, the
// ledger tells the journal lines others append from its own
// (ledger.WatchJournal). Before the runner reads the journal's commands
// (enforceOwned), and after each unconfined program (agent, guards,
// reviewer), those lines are taken out and tree.json's runner-owned
// fields brought back to the ledger's (what a command of the journal
// covers is taken, as at every boundary): a forgery never takes effect.
// Each is tamper, noted on the next iteration whose program ends: kept
// under its tamper folder, and the attempt fails. A person's `runner
// skip`, `reset` or `answer` while such slots work is one of those lines:
// `runner pause` first.

// forgery is what was found forged in the runner's files and not yet
// noted on an iteration.
type forgery struct {
	journal []byte // the foreign lines taken out of the journal
	tree    []byte // tree.json as it was before its owned fields were put back
}

// watchForgery marks the journal's end when an iteration begins in an
// unconfined slot (lane.Lane.Watched) while none other is under way: what
// was appended before is the person's.
func (r *Runner) watchForgery(l lane.Lane) error {
	if !l.Watched() || len(r.ledger.State().Flights()) > 0 {
		return nil
	}
	return r.ledger.WatchJournal()
}

// sweepForgery takes out the journal lines another program appended
// since the mark, and puts tree.json's runner-owned fields back where
// nothing covers their change, keeping both in r.in.forged. While no
// iteration is under way (a pause, between tasks), no program of the
// run's is at work: what was appended since is the person's, and the
// mark moves past it.
func (r *Runner) sweepForgery() error {
	if !r.ledger.WatchingJournal() {
		return nil
	}
	if len(r.ledger.State().Flights()) == 0 {
		return r.ledger.WatchJournal()
	}
	lines, err := r.ledger.ForeignJournal()
	for _, l := range lines {
		r.in.forged.journal = append(r.in.forged.journal, l...)
	}
	if err != nil {
		return err
	}
	data, err := r.forgedOwnedFields()
	if data != nil && r.in.forged.tree == nil {
		r.in.forged.tree = data
	}
	return err
}

// forgedInSlots notes what was found forged (sweepForgery) as tamper of
// the iteration of lane l, keeping it under dir (named with prefix).
func (r *Runner) forgedInSlots(l lane.Lane, dir, prefix string) ([]state.TamperMeta, error) {
	if !l.Watched() {
		return nil, nil
	}
	if err := r.sweepForgery(); err != nil {
		return nil, err
	}
	var tamper []state.TamperMeta
	for _, f := range []struct {
		path string
		data []byte
	}{{r.p.Journal(), r.in.forged.journal}, {r.p.Tree(), r.in.forged.tree}} {
		if f.data == nil {
			continue
		}
		rel := r.p.Rel(f.path)
		keepCopy(filepath.Join(dir, rel), f.data)
		tamper = append(tamper, state.TamperMeta{Path: rel, Change: verify.Modified, Kept: prefix + rel})
	}
	r.in.forged = forgery{}
	return tamper, nil
}

// forgedOwnedFields brings tree.json's runner-owned fields back to the
// ledger's where no command of the journal covers the change, and
// returns the file as it was then; nil when nothing was put back (or the
// tree cannot be read: the loop says so at its next boundary).
func (r *Runner) forgedOwnedFields() ([]byte, error) {
	data, err := os.ReadFile(r.p.Tree())
	if err != nil {
		return nil, nil
	}
	t, err := tree.Parse(r.p.Tree(), data)
	if err != nil {
		return nil, nil
	}
	taken, refused := outcome.ApplyOwned(t, r.ledger.Owned(), r.ownedCommands)
	for _, n := range taken {
		r.ledger.Own(n.ID, string(n.Status), n.Attempts, n.BlockedReason)
	}
	if len(refused) == 0 {
		return nil, nil
	}
	if err := tree.Save(r.p.Tree(), t); err != nil {
		return nil, err
	}
	r.in.seen.tree = sumBytes(tree.Marshal(t))
	return data, nil
}

// keepCopy writes data at path, its folder made: a copy kept for the
// person, best effort.
func keepCopy(path string, data []byte) {
	if err := fsutil.MkdirAll(filepath.Dir(path), 0o755); err == nil {
		fsutil.WriteFileAtomic(path, data, 0o644)
	}
}
