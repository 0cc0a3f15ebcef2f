package state

import "testing"

func TestUsageAdd(t *testing.T) {
	tests := []struct {
		name   string
		a, b   Usage
		want   Usage
		tokens int64
	}{
		{"into nothing", Usage{}, Usage{InputTokens: 10, CachedInputTokens: 4, OutputTokens: 2, CostUSD: 0.5, CostSource: CostReported},
			Usage{InputTokens: 10, CachedInputTokens: 4, OutputTokens: 2, CostUSD: 0.5, CostSource: CostReported}, 12},
		{"tokens only keep the source", Usage{CostUSD: 1, CostSource: CostComputed}, Usage{InputTokens: 3},
			Usage{InputTokens: 3, CostUSD: 1, CostSource: CostComputed}, 3},
		{"mixed sources", Usage{CostUSD: 1, CostSource: CostReported}, Usage{CostUSD: 2, CostSource: CostComputed},
			Usage{CostUSD: 3, CostSource: "reported+computed"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.a
			got.Add(tt.b)
			if got != tt.want || got.Tokens() != tt.tokens {
				t.Fatalf("Add = %+v (%d tokens), want %+v (%d)", got, got.Tokens(), tt.want, tt.tokens)
			}
		})
	}
}

func TestUsageString(t *testing.T) {
	tests := []struct {
		u    Usage
		want string
	}{
		{Usage{InputTokens: 950, OutputTokens: 20}, "950 in, 20 out, cost unknown"},
		{Usage{InputTokens: 12345, CachedInputTokens: 4000, OutputTokens: 2_500_000, CostUSD: 1.5, CostSource: CostReported},
			"12.3k in (4000 cached), 2.50M out, $1.5000"},
		{Usage{InputTokens: 1, CostUSD: 0.01, CostSource: CostComputed}, "1 in, 0 out, $0.0100 (computed from executor.price)"},
	}
	for _, tt := range tests {
		if got := tt.u.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}
