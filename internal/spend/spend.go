// Package spend is what the agents of a run may spend (SPEC §24): the
// caps of the run (across its invocations) and of each task (over all its
// attempts), in tokens and US dollars; what is left of them for one agent
// run (an Allowance), which the executor checks every usage report of an
// agent at work against, so that the agent is stopped as soon as a cap is
// reached; what the agent runs at work at the same time have used
// (Meter); and which executor a task's attempt is given to (the ladder:
// loop.escalate, or a node's executors).
//
// It reads and writes no file: the coordinator (package loop) gives it
// the caps and what was spent, books what the agents used in the ledger,
// and decides what a reached cap makes of an attempt, a task and the run.
package spend

import (
	"fmt"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// Cap is one spend cap: the setting it comes from (Key), what it bounds
// (Scope: state.ScopeRun or ScopeTask; Unit: state.UnitTokens or
// UnitUSD) and the cap.
type Cap struct {
	Key   string  `json:"key"`
	Scope string  `json:"scope"`
	Unit  string  `json:"unit"`
	Cap   float64 `json:"cap"`
}

// CapsOf returns the caps an agent run on a task works under: the run's
// (loop.max_cost_usd, loop.max_tokens) and the task's, its node's own
// (or its nearest ancestor's, s) in place of loop.task_max_cost_usd and
// loop.task_max_tokens. A cap of 0 is none.
func CapsOf(l config.Loop, s tree.Spend) []Cap {
	var caps []Cap
	add := func(key, scope, unit string, v float64) {
		if v > 0 {
			caps = append(caps, Cap{Key: key, Scope: scope, Unit: unit, Cap: v})
		}
	}
	if s.MaxCostUSD != nil {
		add(fmt.Sprintf("max_cost_usd of %s in tree.json", s.CostFrom), state.ScopeTask, state.UnitUSD, *s.MaxCostUSD)
	} else {
		add("loop.task_max_cost_usd", state.ScopeTask, state.UnitUSD, l.TaskMaxCostUSD)
	}
	if s.MaxTokens != nil {
		add(fmt.Sprintf("max_tokens of %s in tree.json", s.TokensFrom), state.ScopeTask, state.UnitTokens, float64(*s.MaxTokens))
	} else {
		add("loop.task_max_tokens", state.ScopeTask, state.UnitTokens, float64(l.TaskMaxTokens))
	}
	return append(caps, RunCaps(l)...)
}

// RunCaps returns the run's caps alone: what a planning agent works under.
func RunCaps(l config.Loop) []Cap {
	var caps []Cap
	if l.MaxCostUSD > 0 {
		caps = append(caps, Cap{Key: "loop.max_cost_usd", Scope: state.ScopeRun, Unit: state.UnitUSD, Cap: l.MaxCostUSD})
	}
	if l.MaxTokens > 0 {
		caps = append(caps, Cap{Key: "loop.max_tokens", Scope: state.ScopeRun, Unit: state.UnitTokens, Cap: float64(l.MaxTokens)})
	}
	return caps
}

// Over returns the first of caps that spent has reached, the task's
// before the run's; nil when none. task and run are what the task and the
// run have spent.
func Over(caps []Cap, task, run state.Usage) *state.CapHit {
	for _, scope := range []string{state.ScopeTask, state.ScopeRun} {
		for _, c := range caps {
			if v, known := c.against(task, run).In(c.Unit); c.Scope == scope && known && v >= c.Cap {
				return c.hit(v)
			}
		}
	}
	return nil
}

// against is what c counts: the task's spend for a task's cap, the run's
// for the run's.
func (c Cap) against(task, run state.Usage) state.Usage {
	if c.Scope == state.ScopeTask {
		return task
	}
	return run
}

// hit is the CapHit of c with used spent against it.
func (c Cap) hit(used float64) *state.CapHit {
	return &state.CapHit{Key: c.Key, Scope: c.Scope, Unit: c.Unit, Cap: c.Cap, Used: used}
}

// Ladder returns the ladder of executors a task's attempts climb: its
// node's (or nearest ancestor's) executors, else loop.escalate; nil
// without one.
func Ladder(l config.Loop, s tree.Spend) []string {
	if len(s.Executors) > 0 {
		return s.Executors
	}
	return l.Escalate
}

// Rung returns the rung of ladder a task's attempt (1-based) is given
// to: the first for attempt 1, the next for each later one, the last
// repeating; nil without a ladder.
func Rung(ladder []string, attempt int) *state.RungMeta {
	if len(ladder) == 0 {
		return nil
	}
	n := min(max(attempt, 1), len(ladder))
	return &state.RungMeta{N: n, Of: len(ladder), Executor: ladder[n-1]}
}

// UnknownExecutors returns an error naming, for each task of t whose
// executors name an executor cfg's chain does not have, the task and the
// name; nil when every name is known.
func UnknownExecutors(cfg *config.Config, t *tree.Tree, file string) error {
	names := cfg.ExecutorNames()
	var problems []string
	ix := tree.NewIndex(t)
	t.Walk(func(n *tree.Node) {
		for k, name := range n.Executors {
			if !names[name] {
				problems = append(problems, fmt.Sprintf("%s: %s: executors item %d: %q is not an executor of config.toml; name [executor] or a [[fallback]] (%s)",
					file, ix.Path(n.ID), k+1, name, cfg.ChainNames()))
			}
		}
	})
	if len(problems) == 0 {
		return nil
	}
	return &NamesError{Problems: problems}
}

// NamesError lists the tasks whose executors name no executor of the
// chain.
type NamesError struct{ Problems []string }

func (e *NamesError) Error() string {
	s := ""
	for i, p := range e.Problems {
		if i > 0 {
			s += "\n"
		}
		s += p
	}
	return s
}

// ContractLine is what the Runner Contract tells an agent of its budget:
// what is left of each cap it works under, the task having spent task
// and the run run; "" without caps. An agent that knows it works in
// small steps and says where it stands before it is stopped.
func ContractLine(caps []Cap, task, run state.Usage) string {
	var parts []string
	for _, scope := range []string{state.ScopeTask, state.ScopeRun} {
		var left []string
		for _, c := range caps {
			if c.Scope != scope {
				continue
			}
			used, _ := c.against(task, run).In(c.Unit)
			left = append(left, fmt.Sprintf("%s of %s", state.Amount(c.Unit, max(c.Cap-used, 0)), state.Amount(c.Unit, c.Cap)))
		}
		if len(left) == 0 {
			continue
		}
		whose := "this task has"
		if scope == state.ScopeRun {
			whose = "the whole run has"
		}
		parts = append(parts, whose+" "+joinAnd(left)+" left")
	}
	if len(parts) == 0 {
		return ""
	}
	return "- Spend is capped: " + joinAnd(parts) + " (tokens in and out, over every attempt). At a cap the runner stops you at once and the attempt fails, its work kept for the next one: work in small steps that leave the tree building, and report before the budget runs out.\n"
}

func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
