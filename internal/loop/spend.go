package loop

import (
	"fmt"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/outcome"
	"github.com/runner-cli/runner/internal/spend"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// Spend (SPEC §24, package spend): every agent run of an iteration, the
// reviewer's included, gets what is left of the caps of its task and of
// the run as its allowance, and the executor stops it at the first one
// it reaches; the attempt is then recorded cost_cap, charged, its work
// kept as an interrupted attempt's. A task over its cap is blocked
// ("cost cap"); the run over its cap stops before its next iteration
// (budgetExceeded). Each attempt is given to the rung of its task's
// ladder of executors (loop.escalate, a node's executors).

// startSpend makes the run's meter, which every usage the ledger books
// moves, and says how the caps are enforced.
func (r *Runner) startSpend(t *tree.Tree) {
	r.meter = spend.NewMeter(r.ledger.State().Usage)
	r.ledger.OnUsage(r.meter.Book)
	if s := spend.Notice(r.cfg, t); s != "" {
		fmt.Fprint(r.opts.Notices, s)
	}
}

// capsOf are the caps task id of t works under (nil: the task is gone).
func (r *Runner) capsOf(ix *tree.Index, id string) []spend.Cap {
	if ix.Node(id) == nil {
		return spend.RunCaps(r.cfg.Loop)
	}
	return spend.CapsOf(r.cfg.Loop, tree.SpendOf(ix, id))
}

// capsNow are the caps of task id as tree.json says now.
func (r *Runner) capsNow(id string) []spend.Cap {
	t, err := r.loadTree()
	if err != nil {
		return spend.RunCaps(r.cfg.Loop)
	}
	return r.capsOf(tree.NewIndex(t), id)
}

// allowance is what a run of the agent or the reviewer of task node may
// spend under caps, pending what its iteration used and the ledger has
// not booked (nil: nothing).
func (r *Runner) allowance(caps []spend.Cap, node string, pending *state.Usage) *spend.Allowance {
	rs := r.ledger.State()
	a := spend.NewAllowance(caps, rs.UsageByTask[node], rs.Usage)
	if pending != nil {
		a.Pending = *pending
	}
	return a
}

// rungOf is the rung of its ladder node's next attempt is given to; nil
// without a ladder.
func (r *Runner) rungOf(ix *tree.Index, node *tree.Node) *state.RungMeta {
	return spend.Rung(spend.Ladder(r.cfg.Loop, tree.SpendOf(ix, node.ID)), node.Attempts+1)
}

// overCap returns the task cap of leaf n that its spend has reached, nil
// when none is.
func (r *Runner) overCap(ix *tree.Index, n *tree.Node) *state.CapHit {
	if r.ledger == nil {
		return nil // a tree settled outside a run (tests)
	}
	return spend.Over(r.capsOf(ix, n.ID), r.ledger.State().UsageByTask[n.ID], state.Usage{})
}

// settleCaps is settleAttempts for the caps: an open leaf over its task
// cap is blocked, one blocked for its cap opens again once the cap is
// raised (outcome.SettleCap). It reports the leaves it changed.
func (r *Runner) settleCaps(t *tree.Tree) (changed bool) {
	ix := tree.NewIndex(t)
	t.Walk(func(n *tree.Node) {
		if !n.IsLeaf() {
			return
		}
		f, moved := outcome.SettleCap(outcome.FieldsOf(n), r.overCap(ix, n))
		if !moved {
			return
		}
		if f.Status == tree.StatusBlocked {
			r.log.Info("blocking a task over its spend cap", "node", n.ID, "reason", f.BlockedReason)
		} else {
			r.log.Info("reopening a task whose spend cap was raised", "node", n.ID)
		}
		f.Set(n)
		r.ledger.Own(n.ID, string(f.Status), f.Attempts, f.BlockedReason)
		changed = true
	})
	return changed
}

// forgetResetSpend gives a task that `runner reset` reopened (taken with
// its attempts at 0) its caps back: its spend starts from nothing.
func (r *Runner) forgetResetSpend(taken []*tree.Node) {
	for _, n := range taken {
		if n.EffectiveStatus() == tree.StatusOpen && n.Attempts == 0 {
			r.ledger.ForgetTaskUsage(n.ID)
		}
	}
}

// noteCostCap notes in meta the cap that stopped its agent or reviewer.
func noteCostCap(meta *state.Meta, res *executor.Result, by string) {
	if res == nil || res.Class != executor.ClassCostCap || res.CostCap == nil {
		return
	}
	h := *res.CostCap
	h.By = by
	meta.CostCap = &h
}

// notStarted is the result of an agent run that could not start: a cap
// it works under was reached before (by what its iteration used so far).
func notStarted(h *state.CapHit) *executor.Result {
	return &executor.Result{ExitCode: -1, Class: executor.ClassCostCap, CostCap: h,
		Error:        "the agent was not started: " + h.String(),
		MessageError: "no final message: the agent was not started: " + h.String()}
}

// costCapSummary is what the next attempt's history.md says of an
// iteration stopped at a cap.
func costCapSummary(meta *state.Meta) string {
	who := "its agent"
	if meta.CostCap.By == "reviewer" {
		who = "its reviewer"
	}
	s := fmt.Sprintf("Iteration %d was stopped by the runner at a spend cap while %s worked: %s. The working tree may hold partial changes from that attempt: check `git status` and `git diff` before building on them, and work in smaller steps.",
		meta.Iteration, who, meta.CostCap.String())
	if meta.Agent != nil && meta.Agent.LogTail != "" {
		s += "\n\nLast lines of the agent's output:\n" + meta.Agent.LogTail
	}
	return s
}

// rungNote says on which rung an iteration's attempt runs, for its
// progress line: " (rung 2 of 2)", or when the rung's executor could not
// take it " (rung 2 of 2: large, limited or set aside)"; "" without a
// ladder.
func rungNote(m *state.Meta) string {
	if m.Rung == nil {
		return ""
	}
	if m.Rung.Executor != m.Executor {
		return fmt.Sprintf(" (rung %d of %d: %s, limited or set aside)", m.Rung.N, m.Rung.Of, m.Rung.Executor)
	}
	return fmt.Sprintf(" (rung %d of %d)", m.Rung.N, m.Rung.Of)
}
