package ledger

import (
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

// A planning run (`runner plan`, SPEC §16) runs an agent outside the
// loop's iterations. It holds the lock and takes the next iteration
// number, whose run folder keeps its files as an iteration's does, but
// it has no phases and no in-flight marker: nothing resumes it. It
// changes tree.json only at its end, after validation, so a runner killed
// meanwhile leaves the tree as it was, and the loop knows nothing of the
// run but its number, which it never gives again (NextIteration skips
// run folders). Its agent is guarded as an iteration's is: the keep is
// brought up to date before it runs, and what it removed of the runner's
// files is put back after.

// SavePlan writes the meta.json of a planning run under way, for people
// (`runner show`): atomic, not fsynced. Nothing reads it back to resume.
func (l *Ledger) SavePlan(meta *state.Meta) error {
	return state.SaveMetaAs(l.p.RunDir(meta.Iteration), meta, fsutil.NotSynced)
}

// PlanAgentStarting brings the keep up to date before a planning agent
// runs in the repository.
func (l *Ledger) PlanAgentStarting() { l.GuardsStarting() }

// PlanAgentExited puts back what planning run n's agent removed of the
// runner's files (checkIntact).
func (l *Ledger) PlanAgentExited(n int) error { return l.checkIntact(n) }

// Planned records a planning run that ended: meta.json, then its usage
// added to the run state's totals (run_state.json, which
// loop.max_cost_usd and loop.max_tokens are checked against), then the
// journal's plan record with summary, each durable before the next. A
// crash before the run state is saved leaves the usage uncounted; after
// it, the journal line missing: the usage is never counted twice.
func (l *Ledger) Planned(meta *state.Meta, summary string) error {
	if err := l.saveMetaDurably(meta); err != nil {
		return err
	}
	if meta.Usage != nil {
		l.AddUsage(meta.Executor, "", meta.Usage) // the run's, no task's
		if err := l.saveState(fsutil.Durable); err != nil {
			return err
		}
	}
	rec := state.Record{Iteration: meta.Iteration, Node: meta.Node, Event: state.EventPlan, AgentStatus: meta.AgentStatus,
		Outcome: meta.Outcome, Summary: summary, Usage: meta.Usage}
	if meta.Agent != nil {
		rec.AgentClass, rec.Error, rec.Evidence = meta.Agent.Class, meta.Agent.Error, meta.Agent.Evidence
	}
	return l.journal(rec)
}
