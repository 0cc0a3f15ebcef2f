package state

import "testing"

// TestUsedAmount: what was used against a cap never reads as the cap
// itself when it is not.
func TestUsedAmount(t *testing.T) {
	for _, c := range []struct {
		unit        string
		used, limit float64
		want        string
	}{
		{UnitUSD, 0.0342, 0.03, "$0.0342"},
		{UnitUSD, 0.03, 0.03, "$0.03"},
		{UnitUSD, 1.5, 0.03, "$1.50"},
		{UnitUSD, 20.004, 20, "$20.0040"},
		{UnitTokens, 2400, 2000, "2400 tokens"},
	} {
		if got := UsedAmount(c.unit, c.used, c.limit); got != c.want {
			t.Errorf("UsedAmount(%s, %v, %v) = %q, want %q", c.unit, c.used, c.limit, got, c.want)
		}
	}
}
