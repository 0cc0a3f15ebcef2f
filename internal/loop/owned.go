package loop

import (
	"fmt"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/outcome"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// A task's status, attempts and blocked reason are the runner's (SPEC §13):
// they change by an outcome, `runner reset` or `runner skip`, and the
// ledger keeps them (state.RunState.Owned). tree.json shows them; a
// change made there otherwise is not taken: the runner writes its values
// back and says so once, with the command to use.
//
// What is taken from tree.json: the fields of a task the runner has no
// record of (a task a person added, or every task when the runner first
// sees the tree), and those of a task that a `reset` or `skip` record in
// the journal, newer than the runner's own last change of it, covers.
// Only leaves are checked: a group's status follows its children.

// ownedNotice is what the runner said last about edits it did not take,
// so that the same edit is reported once.
type ownedNotice map[string]string

// enforceOwned brings t's runner-owned fields in line with the ledger's,
// taking what a person may change, and reports whether t changed.
func (r *Runner) enforceOwned(t *tree.Tree) bool {
	if r.ledger == nil {
		return false // a tree settled outside a run (tests)
	}
	if err := r.sweepForgery(); err != nil {
		r.log.Warn("could not look for forged journal lines and tree.json statuses", "err", err)
	}
	owned := r.ledger.Owned()
	ix := tree.NewIndex(t)
	if owned == nil {
		r.ledger.StartOwning()
		t.Walk(func(n *tree.Node) {
			if n.IsLeaf() {
				r.ledger.Own(n.ID, string(n.Status), n.Attempts, n.BlockedReason)
			}
		})
		return false
	}
	taken, refused := outcome.ApplyOwned(t, owned, r.ownedCommands)
	for _, n := range taken {
		r.ledger.Own(n.ID, string(n.Status), n.Attempts, n.BlockedReason)
	}
	r.forgetResetSpend(taken)
	r.ledger.ForgetOwned(func(id string) bool { return ix.Node(id) != nil })
	for _, n := range refused {
		r.noticeRefused(ix, n)
	}
	return len(refused) > 0
}

// ownedCommands returns the journal's reset and skip records, and those
// of plans written to tree.json (outcome.OwnedCommands).
func (r *Runner) ownedCommands() []state.Record {
	recs, err := state.ReadJournal(r.p.Journal())
	if err != nil {
		r.log.Warn("cannot read the journal for resets and skips", "err", err)
	}
	return outcome.OwnedCommands(recs)
}

// noticeRefused says once per edit that a change of n's runner-owned
// fields in tree.json was not taken, and what to do instead.
func (r *Runner) noticeRefused(ix *tree.Index, n *tree.Node) {
	if r.in.refusedSaid == nil {
		r.in.refusedSaid = ownedNotice{}
	}
	f := outcome.FieldsOf(n)
	key := fmt.Sprintf("%s/%d/%s", f.Status, f.Attempts, f.BlockedReason)
	if r.in.refusedSaid[n.ID] == key {
		return
	}
	r.in.refusedSaid[n.ID] = key
	fmt.Fprintf(r.opts.Notices, "runner: %s: the change of its status, attempts or blocked_reason in tree.json was not taken (they are the runner's); "+
		"use `runner skip %s` to mark it done, `runner reset %s` to reopen it\n", inert.Line(ix.Path(n.ID)), inert.Line(n.ID), inert.Line(n.ID))
}
