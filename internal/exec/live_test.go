package executor

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/runner-cli/runner/internal/spend"
	"github.com/runner-cli/runner/internal/state"
)

// longRun is a script of three model responses of 1000 tokens in (300
// cached) and 200 out each; the third waits long enough that only an
// agent the runner did not stop gets to it.
const longRun = `{"default": {"turns": [
	{"usage": {"input_tokens": 1000, "cached_input_tokens": 300, "output_tokens": 200}, "write": [{"path": "t1.txt", "content": "1"}]},
	{"usage": {"input_tokens": 1000, "cached_input_tokens": 300, "output_tokens": 200}, "write": [{"path": "t2.txt", "content": "2"}]},
	{"pause": "20s", "usage": {"input_tokens": 1000, "cached_input_tokens": 300, "output_tokens": 200}, "write": [{"path": "t3.txt", "content": "3"}]}],
	"message": {"status": "done", "summary": "three turns"}}}`

func allowance(key, scope, unit string, limit float64) *spend.Allowance {
	return spend.NewAllowance([]spend.Cap{{Key: key, Scope: scope, Unit: unit, Cap: limit}}, state.Usage{}, state.Usage{})
}

// A cap reached while the agent works stops it there: its later turns
// never happen, and the run is classed cost_cap with the figures and the
// usage it reported so far.
func TestCapStopsTheAgentWhileItWorks(t *testing.T) {
	for _, mode := range []string{PresetClaude, PresetCodex} {
		for _, tc := range []struct {
			name  string
			a     *spend.Allowance
			price state.Prices
			used  float64
		}{
			{"tokens", allowance("loop.task_max_tokens", state.ScopeTask, state.UnitTokens, 2000), state.Prices{}, 2400},
			{"cost", allowance("loop.max_cost_usd", state.ScopeRun, state.UnitUSD, 0.003), state.Prices{Input: 1, CachedInput: 1, Output: 5}, 0.004},
		} {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				o, r := setupCLI(t, mode, longRun)
				o.Allowance, o.Prices = tc.a, tc.price
				res := runBounded(t, context.Background(), o, r)
				if res.Class != ClassCostCap || res.CostCap == nil {
					t.Fatalf("class %q (%s), cap %+v; want cost_cap", res.Class, res.Error, res.CostCap)
				}
				if h := res.CostCap; h.Scope != tc.a.Limits[0].Scope || h.Key != tc.a.Limits[0].Key || h.Used < tc.used*0.999 || h.Used > tc.used*1.001 {
					t.Fatalf("cap hit %+v, want %v used", h, tc.used)
				}
				if _, err := os.Stat(filepath.Join(r.Root, "t2.txt")); err != nil {
					t.Fatalf("turn 2 did not happen: %v", err)
				}
				if _, err := os.Stat(filepath.Join(r.Root, "t3.txt")); err == nil {
					t.Fatal("turn 3 happened after the cap was reached")
				}
				if res.Usage == nil || res.Usage.Tokens() != 2400 || res.Usage.CachedInputTokens != 600 {
					t.Fatalf("usage %+v, want the two turns' 2400 tokens (600 cached)", res.Usage)
				}
				if res.AgentFailed {
					t.Fatal("a stop at a cap counted as the agent's failure")
				}
			})
		}
	}
}

// Without a cap the agent works to its end, and the usage it reports
// then counts: each of Claude's messages once, however many events
// carry it.
func TestUsageOfALongRun(t *testing.T) {
	for _, mode := range []string{PresetClaude, PresetCodex} {
		t.Run(mode, func(t *testing.T) {
			o, r := setupCLI(t, mode, `{"default": {"turns": [
				{"usage": {"input_tokens": 1000, "cached_input_tokens": 300, "output_tokens": 200}},
				{"usage": {"input_tokens": 1000, "cached_input_tokens": 300, "output_tokens": 200}}],
				"message": {"status": "done", "summary": "two turns"}}}`)
			o.Allowance = allowance("loop.max_tokens", state.ScopeRun, state.UnitTokens, 1e9)
			res := runBounded(t, context.Background(), o, r)
			if res.Class != ClassOK || res.Usage == nil || res.Usage.Tokens() != 2400 {
				t.Fatalf("class %q, usage %+v; want ok and 2400 tokens", res.Class, res.Usage)
			}
		})
	}
}

// What the agent reported while it works is what a run it ended on its
// own never summed up: Claude's assistant events count when no result
// event came.
func TestLiveUsageWithoutAResult(t *testing.T) {
	live := &liveUsage{}
	line := func(id string, in int64) []byte {
		return []byte(`{"type":"assistant","message":{"id":"` + id + `","usage":{"input_tokens":` + strconv.FormatInt(in, 10) + `,"cache_read_input_tokens":5,"output_tokens":2}}}`)
	}
	live.claudeAssistant(line("a", 10))
	live.claudeAssistant(line("a", 10)) // the same message's second block
	live.claudeAssistant(line("b", 20))
	live.claudeAssistant([]byte(`{"type":"user","message":{"usage":{"input_tokens":99}},"x":"assistant"}`))
	u, seen := live.usage()
	if !seen || u.InputTokens != 40 || u.CachedInputTokens != 10 || u.OutputTokens != 4 {
		t.Fatalf("usage %+v (seen %v), want 40 in (10 cached), 4 out", u, seen)
	}
	res := &Result{}
	concludeSpend(res, live, false)
	if res.Usage == nil || *res.Usage != u || res.Class != "" {
		t.Fatalf("result %+v", res)
	}
}
