package spend

import (
	"fmt"
	"slices"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// When says when an agent's usage reaches the caps.
type When int

const (
	// WhileWorking: read as the agent reports it, each model response:
	// the agent is stopped as soon as a cap is reached.
	WhileWorking When = iota
	// AtEnd: known only when the agent's run ends: the cap applies then
	// (the task is blocked, the run stops), after the run passed it.
	AtEnd
	// Never: the agent never reports it (Codex's cost without a price).
	Never
)

// Enforcement is when an executor's tokens and cost reach the caps, and
// from what.
type Enforcement struct {
	Tokens, Cost When
	// From says where the usage is read while the agent works.
	From string
}

// EnforcementOf says when executor e's usage reaches the caps: codex's
// from its session log (CODEX_HOME/sessions/…/rollout-*.jsonl, a
// token_count per model response), claude's from the usage of every
// assistant event of its stream-json output; a cost while the agent
// works only with executor.price (Claude reports its own at its end,
// Codex none); the command preset's at its end, from whatever it reports
// then.
func EnforcementOf(e config.Executor) Enforcement {
	priced := e.Pricing().IsSet()
	switch e.Preset {
	case config.PresetCodex:
		if slices.Contains(e.Args, "--ephemeral") {
			cost := AtEnd
			if !priced {
				cost = Never
			}
			return Enforcement{Tokens: AtEnd, Cost: cost, From: "--ephemeral: codex keeps no session log"}
		}
		en := Enforcement{Tokens: WhileWorking, Cost: WhileWorking, From: "its session log"}
		if !priced {
			en.Cost = Never
		}
		return en
	case config.PresetClaude:
		en := Enforcement{Tokens: WhileWorking, Cost: WhileWorking, From: "the usage of its stream-json events"}
		if !priced {
			en.Cost = AtEnd
		}
		return en
	}
	return Enforcement{Tokens: AtEnd, Cost: AtEnd}
}

// Notice is what a run says at its start of its spend caps and, for each
// executor that runs agents (the chain, the reviewer), when they are
// enforced: "" when no cap is set. It never says enforced where it is
// not: an agent that reports no usage while it works is capped at its
// end, and says so.
func Notice(cfg *config.Config, t *tree.Tree) string {
	l := cfg.Loop
	var caps []string
	if l.MaxCostUSD > 0 || l.MaxTokens > 0 {
		caps = append(caps, "the run "+both(l.MaxCostUSD, l.MaxTokens))
	}
	if l.TaskMaxCostUSD > 0 || l.TaskMaxTokens > 0 {
		caps = append(caps, "each task "+both(l.TaskMaxCostUSD, l.TaskMaxTokens))
	}
	own, cost, tokens := 0, l.MaxCostUSD > 0 || l.TaskMaxCostUSD > 0, l.MaxTokens > 0 || l.TaskMaxTokens > 0
	if t != nil {
		t.Walk(func(n *tree.Node) {
			if n.MaxCostUSD != nil || n.MaxTokens != nil {
				own++
				cost = cost || n.MaxCostUSD != nil && *n.MaxCostUSD > 0
				tokens = tokens || n.MaxTokens != nil && *n.MaxTokens > 0
			}
		})
	}
	if own > 0 {
		caps = append(caps, fmt.Sprintf("%d %s of tree.json with caps of their own", own, plural(own, "node", "nodes")))
	}
	if len(caps) == 0 || !cost && !tokens {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "runner: spend caps: %s\n", strings.Join(caps, "; "))
	execs := cfg.Chain()
	labels := make([]string, 0, len(execs)+1)
	for _, e := range execs {
		labels = append(labels, e.Label())
	}
	if cfg.Review.Enabled {
		execs = append(execs, cfg.Review.Executor)
		labels = append(labels, state.ReviewLabel(cfg.Review.Label()))
	}
	for i, e := range execs {
		fmt.Fprintf(&b, "runner:   %s: %s\n", labels[i], describe(EnforcementOf(e), e.Preset, tokens, cost))
	}
	return b.String()
}

// describe says when an executor's usage meets the caps set (tokens,
// cost).
func describe(en Enforcement, preset string, tokens, cost bool) string {
	if preset == config.PresetCommand {
		return "applied at the end of each of its runs, from the usage it reports then (if any): preset command reports no usage while it runs"
	}
	var parts []string
	if tokens {
		parts = append(parts, "tokens "+when(en.Tokens, en.From))
	}
	if cost {
		c := "cost " + when(en.Cost, en.From+", priced by executor.price")
		switch {
		case en.Cost == AtEnd && preset == config.PresetClaude:
			c += " (its own total_cost_usd; set executor.price to enforce it while it works)"
		case en.Cost == Never:
			c += " (Codex reports no cost: set executor.price)"
		}
		parts = append(parts, c)
	}
	return strings.Join(parts, "; ")
}

func when(w When, from string) string {
	switch w {
	case WhileWorking:
		return "enforced while it works (" + from + ")"
	case AtEnd:
		if strings.HasPrefix(from, "--ephemeral") {
			return "applied only at the end of each of its runs (" + from + ")"
		}
		return "applied only at the end of each of its runs"
	}
	return "never counted"
}

// both writes a dollar cap and a token cap, either 0 (none).
func both(usd float64, tokens int64) string {
	var parts []string
	if usd > 0 {
		parts = append(parts, state.Amount(state.UnitUSD, usd))
	}
	if tokens > 0 {
		parts = append(parts, state.Amount(state.UnitTokens, float64(tokens)))
	}
	return strings.Join(parts, " and ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
