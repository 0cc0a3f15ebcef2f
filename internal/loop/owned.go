package loop

import (
	"fmt"
	"time"

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
	var commands []state.Record // reset and skip records, read when needed
	loaded := false
	changed := false
	var refused []*tree.Node
	t.Walk(func(n *tree.Node) {
		if !n.IsLeaf() {
			return
		}
		o, known := owned[n.ID]
		if !known {
			r.ledger.Own(n.ID, string(n.Status), n.Attempts, n.BlockedReason)
			return
		}
		if string(n.Status) == o.Status && n.Attempts == o.Attempts && n.BlockedReason == o.BlockedReason {
			return
		}
		if !loaded {
			commands, loaded = r.ownedCommands(), true
		}
		if coveredSince(commands, ix, n.ID, o.At) {
			r.ledger.Own(n.ID, string(n.Status), n.Attempts, n.BlockedReason)
			return
		}
		refused = append(refused, n)
		n.Status, n.Attempts, n.BlockedReason = tree.Status(o.Status), o.Attempts, o.BlockedReason
		changed = true
	})
	r.ledger.ForgetOwned(func(id string) bool { return ix.Node(id) != nil })
	for _, n := range refused {
		r.noticeRefused(ix, n)
	}
	if changed {
		t.Normalize()
	}
	return changed
}

// ownedCommands returns the journal's reset and skip records, and those
// of plans written to tree.json (`runner plan --force` replaces a tree
// with progress).
func (r *Runner) ownedCommands() []state.Record {
	recs, err := state.ReadJournal(r.p.Journal())
	if err != nil {
		r.log.Warn("cannot read the journal for resets and skips", "err", err)
	}
	var out []state.Record
	for _, rec := range recs {
		if rec.Event == state.EventReset || rec.Event == state.EventSkipped ||
			(rec.Event == state.EventPlan && rec.Outcome == state.OutcomePlanWritten) {
			out = append(out, rec)
		}
	}
	return out
}

// coveredSince reports whether a reset of id or of a group above it, or
// a skip of id, was recorded after since.
func coveredSince(commands []state.Record, ix *tree.Index, id string, since time.Time) bool {
	for _, c := range commands {
		if !c.Time.After(since) {
			continue
		}
		if c.Event == state.EventPlan && (c.Node == "" || c.Node == id || isUnder(ix, id, c.Node)) {
			return true // a plan written to tree.json, of the whole tree or under one task
		}
		if c.Node == id || (c.Event == state.EventReset && isUnder(ix, id, c.Node)) {
			return true
		}
	}
	return false
}

// isUnder reports whether id is below group in the tree.
func isUnder(ix *tree.Index, id, group string) bool {
	for p := ix.Parent(id); p != nil; p = ix.Parent(p.ID) {
		if p.ID == group {
			return true
		}
	}
	return false
}

// noticeRefused says once per edit that a change of n's runner-owned
// fields in tree.json was not taken, and what to do instead.
func (r *Runner) noticeRefused(ix *tree.Index, n *tree.Node) {
	if r.refusedSaid == nil {
		r.refusedSaid = ownedNotice{}
	}
	f := outcome.FieldsOf(n)
	key := fmt.Sprintf("%s/%d/%s", f.Status, f.Attempts, f.BlockedReason)
	if r.refusedSaid[n.ID] == key {
		return
	}
	r.refusedSaid[n.ID] = key
	fmt.Fprintf(r.opts.Notices, "runner: %s: the change of its status, attempts or blocked_reason in tree.json was not taken (they are the runner's); "+
		"use `runner skip %s` to mark it done, `runner reset %s` to reopen it\n", inert.Line(ix.Path(n.ID)), inert.Line(n.ID), inert.Line(n.ID))
}
