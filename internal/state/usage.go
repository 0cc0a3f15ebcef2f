package state

import "fmt"

// Where a cost came from (Usage.CostSource).
const (
	CostReported = "reported" // the agent reported it (Claude's total_cost_usd)
	CostComputed = "computed" // tokens × executor.price
)

// Usage is what agent runs consumed, as the agents reported it: per
// iteration in meta.json and the journal, summed in run_state.json.
// InputTokens counts every input token, cached ones included;
// CachedInputTokens is the cached part of it.
type Usage struct {
	InputTokens       int64   `json:"input_tokens"`
	CachedInputTokens int64   `json:"cached_input_tokens"`
	OutputTokens      int64   `json:"output_tokens"`
	CostUSD           float64 `json:"cost_usd"`
	// CostSource says where CostUSD came from: "reported", "computed", or
	// "" when no cost is known (CostUSD is then 0). A sum whose parts came
	// from both says "reported+computed".
	CostSource string `json:"cost_source,omitempty"`
}

// ReviewLabel is the name a reviewer's usage is counted under, apart
// from its executor's: a reviewer of the same preset (or name) as
// [executor] or a [[fallback]] is not that executor, and run_state.json's
// usage_by_executor and the report keep the two apart.
func ReviewLabel(reviewer string) string { return reviewer + " (review)" }

// Tokens is the number loop.max_tokens counts: input plus output.
func (u Usage) Tokens() int64 { return u.InputTokens + u.OutputTokens }

// IsZero reports whether nothing was reported.
func (u Usage) IsZero() bool { return u == Usage{} }

// Add adds v to u.
func (u *Usage) Add(v Usage) {
	u.InputTokens += v.InputTokens
	u.CachedInputTokens += v.CachedInputTokens
	u.OutputTokens += v.OutputTokens
	u.CostUSD += v.CostUSD
	switch {
	case v.CostSource == "" || v.CostSource == u.CostSource:
	case u.CostSource == "":
		u.CostSource = v.CostSource
	default:
		u.CostSource = CostReported + "+" + CostComputed
	}
}

// String is the one-line form people read: "12.3k in (4.0k cached),
// 1.2k out, $0.0421".
func (u Usage) String() string {
	s := fmt.Sprintf("%s in", count(u.InputTokens))
	if u.CachedInputTokens > 0 {
		s += fmt.Sprintf(" (%s cached)", count(u.CachedInputTokens))
	}
	s += fmt.Sprintf(", %s out", count(u.OutputTokens))
	if u.CostSource != "" {
		s += fmt.Sprintf(", $%.4f", u.CostUSD)
		if u.CostSource == CostComputed {
			s += " (computed from executor.price)"
		}
	} else {
		s += ", cost unknown"
	}
	return s
}

// count writes a token count compactly: 950, 12.3k, 4.56M.
func count(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// Prices are US dollars per million tokens (config executor.price, or
// its older spelling executor.prices):
// what turns the tokens an agent reports into a cost, for agents that
// report no cost of their own. All zero means no prices are set.
type Prices struct {
	Input       float64 `toml:"input"`
	CachedInput float64 `toml:"cached_input"`
	Output      float64 `toml:"output"`
}

// IsSet reports whether any price is set.
func (p Prices) IsSet() bool { return p.Input != 0 || p.CachedInput != 0 || p.Output != 0 }

// Cost prices u: uncached input at Input, cached input at CachedInput,
// output at Output.
func (p Prices) Cost(u Usage) float64 {
	uncached := u.InputTokens - u.CachedInputTokens
	return (float64(uncached)*p.Input + float64(u.CachedInputTokens)*p.CachedInput + float64(u.OutputTokens)*p.Output) / 1e6
}
