package config

import (
	"fmt"
	"math"
	"strings"
)

// The spend settings (SPEC §24): the caps of the run and of each task,
// the ladder of executors, and what an executor's tokens cost.

// validateSpend checks the caps and the ladder of [loop].
func (r *report) validateSpend(c *Config) {
	l := &c.Loop
	r.dollars("loop.max_cost_usd", l.MaxCostUSD)
	r.dollars("loop.task_max_cost_usd", l.TaskMaxCostUSD)
	if l.MaxTokens < 0 {
		r.addf("loop.max_tokens", "must be 0 or more (0 = no limit), got %d", l.MaxTokens)
	}
	if l.TaskMaxTokens < 0 {
		r.addf("loop.task_max_tokens", "must be 0 or more (0 = no limit), got %d", l.TaskMaxTokens)
	}
	for _, key := range []string{"loop.max_cost_usd", "loop.task_max_cost_usd"} {
		if v := map[string]float64{"loop.max_cost_usd": l.MaxCostUSD, "loop.task_max_cost_usd": l.TaskMaxCostUSD}[key]; v <= 0 {
			continue
		}
		for _, ex := range r.executorTables(c) {
			if ex.e.Preset == PresetCodex && !ex.e.Pricing().IsSet() {
				r.addAt(key, ex.key+".price", "must be set when %s is: Codex reports tokens, not dollars, so the cost is tokens × price; "+
					"for example price = { input_per_mtok = 1.25, cached_input_per_mtok = 0.125, output_per_mtok = 10.0 } (US dollars per million tokens)", key)
			}
		}
	}
	names := c.ExecutorNames()
	for i, name := range l.Escalate {
		if !names[name] {
			r.addf(indexPath("loop.escalate", i), "%q is not an executor of the chain; name [executor] or a [[fallback]] (%s)", name, c.chainNames())
		}
	}
}

// dollars checks a cap in US dollars.
func (r *report) dollars(key string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		r.addf(key, "must be a number of dollars, 0 or more (0 = no limit), got %v", v)
	}
}

// validatePrice checks an executor table's price, and that it does not
// give both price and its older spelling prices.
func (r *report) validatePrice(key string, e *Executor) {
	for _, pr := range []struct {
		key string
		v   float64
	}{
		{"price.input_per_mtok", e.Price.InputPerMTok}, {"price.cached_input_per_mtok", e.Price.CachedInputPerMTok},
		{"price.output_per_mtok", e.Price.OutputPerMTok},
		{"prices.input", e.Prices.Input}, {"prices.cached_input", e.Prices.CachedInput}, {"prices.output", e.Prices.Output},
	} {
		if math.IsNaN(pr.v) || math.IsInf(pr.v, 0) || pr.v < 0 {
			r.addf(key+"."+pr.key, "must be US dollars per million tokens, 0 or more, got %v", pr.v)
		}
	}
	if e.Price.IsSet() && e.Prices.IsSet() {
		r.addAt(key+".prices", key+".price", "and %s.prices both set a price: keep price (prices is its older spelling)", key)
	}
}

// ExecutorNames are the names of the chain's executors ([executor] and
// each [[fallback]]): what loop.escalate and a node's executors may name.
func (c *Config) ExecutorNames() map[string]bool {
	names := map[string]bool{}
	for _, e := range c.Chain() {
		names[e.Label()] = true
	}
	return names
}

// chainNames lists the chain's executors with their tables, for messages.
func (c *Config) chainNames() string {
	list := []string{fmt.Sprintf("%q [executor]", c.Executor.Label())}
	for i, f := range c.Fallbacks {
		list = append(list, fmt.Sprintf("%q %s", f.Label(), indexPath("fallback", i)))
	}
	return strings.Join(list, ", ")
}

// ChainNames lists the chain's executors with their tables ("\"codex\"
// [executor], \"claude\" fallback[0]"), for messages about a name that is
// not one of them.
func (c *Config) ChainNames() string { return c.chainNames() }
