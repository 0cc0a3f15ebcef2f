package state

import (
	"fmt"
)

// Scopes of a spend cap (SPEC §24): the run's (across its invocations)
// or one task's (all its attempts).
const (
	ScopeRun  = "run"
	ScopeTask = "task"
)

// Units of a spend cap.
const (
	UnitTokens = "tokens"
	UnitUSD    = "usd"
)

// CapHit is a spend cap that an agent run reached: the setting it comes
// from, what it bounds, the cap, and what was used against it when the
// runner stopped the agent.
type CapHit struct {
	// Key names the setting: "loop.task_max_tokens", "loop.max_cost_usd",
	// or a node's own ("max_cost_usd of task ops").
	Key   string  `json:"key"`
	Scope string  `json:"scope"` // ScopeRun or ScopeTask
	Unit  string  `json:"unit"`  // UnitTokens or UnitUSD
	Cap   float64 `json:"cap"`
	Used  float64 `json:"used"`
	// By names who was stopped: "agent" or "reviewer".
	By string `json:"by,omitempty"`
}

// String says it in one line: "the task's cap (loop.task_max_tokens,
// 50.0k tokens) was reached: 51.2k used".
func (h CapHit) String() string {
	whose := "the run's"
	if h.Scope == ScopeTask {
		whose = "the task's"
	}
	return fmt.Sprintf("%s cap (%s, %s) was reached: %s used", whose, h.Key, Amount(h.Unit, h.Cap), UsedAmount(h.Unit, h.Used, h.Cap))
}

// UsedAmount writes what was used against a cap, precise enough not to
// read as the cap itself ($0.0342 against $0.03, not $0.03).
func UsedAmount(unit string, used, limit float64) string {
	a := Amount(unit, used)
	if unit == UnitUSD && used != limit && a == Amount(unit, limit) {
		return fmt.Sprintf("$%.4f", used)
	}
	return a
}

// Amount writes v in unit: "$1.25" or "12.3k tokens".
func Amount(unit string, v float64) string {
	if unit == UnitUSD {
		if v != 0 && v < 0.01 {
			return fmt.Sprintf("$%.4f", v)
		}
		return fmt.Sprintf("$%.2f", v)
	}
	return count(int64(v)) + " tokens"
}

// In returns what u spent in unit, and whether it is known (a cost is
// unknown when the agent reported none and no price is set).
func (u Usage) In(unit string) (float64, bool) {
	if unit == UnitUSD {
		return u.CostUSD, u.CostSource != ""
	}
	return float64(u.Tokens()), true
}

// RungMeta is the rung of the ladder of executors (loop.escalate, or a
// node's executors) an attempt was given to: N of Of, naming Executor.
// The executor that ran it is Meta.Executor: another one of the chain
// when the rung's was limited or set aside.
type RungMeta struct {
	N        int    `json:"n"`
	Of       int    `json:"of"`
	Executor string `json:"executor"`
}

// String is "rung 2 of 2 (large)".
func (r RungMeta) String() string {
	return fmt.Sprintf("rung %d of %d (%s)", r.N, r.Of, r.Executor)
}

// Brief says u in a few words: "2400 tokens, $0.0040" (the cost only
// when it is known).
func (u Usage) Brief() string {
	s := Amount(UnitTokens, float64(u.Tokens()))
	if u.CostSource != "" {
		s += ", " + Amount(UnitUSD, u.CostUSD)
	}
	return s
}

// Divided is u shared among n (n > 0): tokens rounded down.
func (u Usage) Divided(n int) Usage {
	if n <= 0 {
		return u
	}
	d := int64(n)
	return Usage{InputTokens: u.InputTokens / d, CachedInputTokens: u.CachedInputTokens / d, OutputTokens: u.OutputTokens / d,
		CostUSD: u.CostUSD / float64(n), CostSource: u.CostSource}
}
