package config

import (
	"slices"
	"testing"

	"github.com/runner-cli/runner/internal/state"
)

func TestSpendSettings(t *testing.T) {
	cfg := mustParse(t, `[executor]
name = "small"
preset = "codex"
price = { input_per_mtok = 2, output_per_mtok = 8 }

[[fallback]]
name = "large"
preset = "claude"

[loop]
max_cost_usd = 10
max_tokens = 2000000
task_max_cost_usd = 1.5
task_max_tokens = 300000
escalate = ["small", "small", "large"]
`)
	l := cfg.Loop
	if l.MaxCostUSD != 10 || l.MaxTokens != 2000000 || l.TaskMaxCostUSD != 1.5 || l.TaskMaxTokens != 300000 {
		t.Fatalf("caps = %+v", l)
	}
	if !slices.Equal(l.Escalate, []string{"small", "small", "large"}) {
		t.Fatalf("escalate = %q", l.Escalate)
	}
	// The cached input price defaults to the input price.
	if got, want := cfg.Executor.Pricing(), (state.Prices{Input: 2, CachedInput: 2, Output: 8}); got != want {
		t.Fatalf("pricing = %+v, want %+v", got, want)
	}
	if cfg.Fallbacks[0].Pricing().IsSet() {
		t.Fatalf("a fallback without a price has one: %+v", cfg.Fallbacks[0].Pricing())
	}
	if names := cfg.ExecutorNames(); !names["small"] || !names["large"] || len(names) != 2 {
		t.Fatalf("executor names = %v", names)
	}
}
