package outcome

import (
	"time"

	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// A task's status, attempts and blocked reason are the runner's (SPEC §13):
// the ledger keeps them (state.RunState.Owned), and tree.json shows them.
// What tree.json says of them is taken only for a task the ledger has no
// record of, or one that a later `reset`, `skip` or written plan in the
// journal covers. Progress is the ledger's, whatever tree.json shows.

// OwnedCommands are the journal's records that let tree.json's owned
// fields stand: resets, skips, answers, and plans written to tree.json.
func OwnedCommands(recs []state.Record) []state.Record {
	var out []state.Record
	for _, rec := range recs {
		if rec.Event == state.EventReset || rec.Event == state.EventSkipped || rec.Event == state.EventAnswered ||
			(rec.Event == state.EventPlan && rec.Outcome == state.OutcomePlanWritten) {
			out = append(out, rec)
		}
	}
	return out
}

// CoveredSince reports whether a reset of id or of a group above it, a
// skip of id, or a plan written of the whole tree or of a task above id,
// was recorded after since.
func CoveredSince(commands []state.Record, ix *tree.Index, id string, since time.Time) bool {
	for _, c := range commands {
		if !c.Time.After(since) {
			continue
		}
		if c.Event == state.EventPlan && (c.Node == "" || c.Node == id || isUnder(ix, id, c.Node)) {
			return true
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

// ApplyOwned brings the leaves of t in line with the ledger's owned
// fields. Taken are the leaves whose fields in t stand: unknown to the
// ledger, or covered by a later command (commands() reads them, once,
// when first needed). Refused are those set back to the ledger's values.
// With owned nil (no ledger yet) nothing changes.
func ApplyOwned(t *tree.Tree, owned map[string]state.Owned, commands func() []state.Record) (taken, refused []*tree.Node) {
	if owned == nil {
		return nil, nil
	}
	ix := tree.NewIndex(t)
	var cmds []state.Record
	loaded := false
	t.Walk(func(n *tree.Node) {
		if !n.IsLeaf() {
			return
		}
		o, known := owned[n.ID]
		if !known {
			taken = append(taken, n)
			return
		}
		if string(n.Status) == o.Status && n.Attempts == o.Attempts && n.BlockedReason == o.BlockedReason {
			return
		}
		if !loaded {
			cmds, loaded = commands(), true
		}
		if CoveredSince(cmds, ix, n.ID, o.At) {
			taken = append(taken, n)
			return
		}
		refused = append(refused, n)
		n.Status, n.Attempts, n.BlockedReason = tree.Status(o.Status), o.Attempts, o.BlockedReason
	})
	if len(refused) > 0 {
		t.Normalize()
	}
	return taken, refused
}
