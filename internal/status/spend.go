package status

import (
	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/spend"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// CapUse is one spend cap of the run (SPEC §24) and what was spent
// against it: the run's total for the run's caps; for the default caps
// of each task (loop.task_*), the most any task not done has spent.
type CapUse struct {
	spend.Cap
	Used float64 `json:"used"`
	// Known is false for a cost no agent reported and no price gave.
	Known bool `json:"known"`
}

// capsOf lists the run's caps and loop.task_*, with what was spent
// against them.
func capsOf(l config.Loop, t *tree.Tree, rs *state.RunState) []CapUse {
	var out []CapUse
	for _, c := range spend.CapsOf(l, tree.Spend{}) {
		u, any := rs.Usage, true
		if c.Scope == state.ScopeTask {
			u, any = mostSpent(t, rs.UsageByTask, c.Unit)
		}
		v, known := u.In(c.Unit)
		known = known || !any // nothing spent yet is known
		out = append(out, CapUse{Cap: c, Used: v, Known: known})
	}
	return out
}

// mostSpent is the spend of the leaf not done of t that spent the most
// in unit; false when none has spent anything.
func mostSpent(t *tree.Tree, by map[string]state.Usage, unit string) (state.Usage, bool) {
	var most state.Usage
	best := -1.0
	t.Walk(func(n *tree.Node) {
		u, ok := by[n.ID]
		if !ok || !n.IsLeaf() || n.EffectiveStatus() == tree.StatusDone {
			return
		}
		if v, _ := u.In(unit); v > best {
			most, best = u, v
		}
	})
	return most, best >= 0
}

// addSpent gives each node of the status tree what its task has spent
// over its attempts (run_state.json's usage_by_task).
func addSpent(n *TreeNode, by map[string]state.Usage) {
	if u, ok := by[n.ID]; ok && !u.IsZero() {
		n.Spent = &u
	}
	for _, c := range n.Children {
		addSpent(c, by)
	}
}
