package spend

import (
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

func ptr[T any](v T) *T { return &v }

func TestCapsOf(t *testing.T) {
	l := config.Loop{MaxCostUSD: 10, MaxTokens: 0, TaskMaxCostUSD: 1, TaskMaxTokens: 5000}
	got := CapsOf(l, tree.Spend{})
	want := []Cap{
		{"loop.task_max_cost_usd", state.ScopeTask, state.UnitUSD, 1},
		{"loop.task_max_tokens", state.ScopeTask, state.UnitTokens, 5000},
		{"loop.max_cost_usd", state.ScopeRun, state.UnitUSD, 10},
	}
	if len(got) != len(want) {
		t.Fatalf("caps = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("cap %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// A node's own caps replace the task defaults; 0 lifts one.
	got = CapsOf(l, tree.Spend{MaxCostUSD: ptr(0.0), CostFrom: "a", MaxTokens: ptr(int64(900)), TokensFrom: "g"})
	if len(got) != 2 || got[0].Key != "max_tokens of g in tree.json" || got[0].Cap != 900 || got[1].Scope != state.ScopeRun {
		t.Fatalf("caps with a node's own = %+v", got)
	}
}

func TestRung(t *testing.T) {
	ladder := []string{"small", "mid", "large"}
	for attempt, want := range map[int]string{0: "small", 1: "small", 2: "mid", 3: "large", 4: "large", 9: "large"} {
		r := Rung(ladder, attempt)
		if r == nil || r.Executor != want || r.Of != 3 {
			t.Errorf("Rung(attempt %d) = %+v, want %s", attempt, r, want)
		}
	}
	if Rung(nil, 2) != nil {
		t.Error("a rung without a ladder")
	}
	l := config.Loop{Escalate: []string{"a", "b"}}
	if got := Ladder(l, tree.Spend{Executors: []string{"c"}}); len(got) != 1 || got[0] != "c" {
		t.Errorf("a node's executors do not replace loop.escalate: %q", got)
	}
	if got := Ladder(l, tree.Spend{}); len(got) != 2 {
		t.Errorf("loop.escalate not taken: %q", got)
	}
}

func TestAllowanceCheck(t *testing.T) {
	caps := []Cap{
		{"loop.task_max_tokens", state.ScopeTask, state.UnitTokens, 1000},
		{"loop.max_cost_usd", state.ScopeRun, state.UnitUSD, 2},
	}
	a := NewAllowance(caps, state.Usage{InputTokens: 400}, state.Usage{CostUSD: 1.5, CostSource: state.CostReported})
	if h := a.Exhausted(); h != nil {
		t.Fatalf("exhausted before it started: %v", h)
	}
	if h := a.Check(state.Usage{InputTokens: 500, OutputTokens: 99}); h != nil {
		t.Fatalf("stopped under the caps: %v", h)
	}
	h := a.Check(state.Usage{InputTokens: 500, OutputTokens: 100})
	if h == nil || h.Key != "loop.task_max_tokens" || h.Used != 1000 || h.Cap != 1000 {
		t.Fatalf("task cap: %+v", h)
	}
	// A cost the agent has not reported counts as nothing yet; a known
	// one reaches the run's cap.
	if h := a.Check(state.Usage{InputTokens: 10, CostUSD: 0.6}); h != nil {
		t.Fatalf("an unknown cost stopped the agent: %v", h)
	}
	h = a.Check(state.Usage{InputTokens: 10, CostUSD: 0.5, CostSource: state.CostComputed})
	if h == nil || h.Scope != state.ScopeRun || h.Used != 2 {
		t.Fatalf("run cap: %+v", h)
	}
	// Pending counts as the run's own.
	a.Pending = state.Usage{InputTokens: 600}
	if h := a.Check(state.Usage{}); h == nil || h.Scope != state.ScopeTask {
		t.Fatalf("pending not counted: %+v", h)
	}
	// What was already spent stops an agent before it starts.
	full := NewAllowance(caps, state.Usage{OutputTokens: 1000}, state.Usage{})
	if h := full.Exhausted(); h == nil || h.Scope != state.ScopeTask {
		t.Fatalf("not exhausted: %+v", h)
	}
	var none *Allowance
	if none.Check(state.Usage{InputTokens: 1 << 40}) != nil || none.Capped() {
		t.Fatal("a nil allowance caps")
	}
}

// Two agents at work at once share the run's cap: neither may pass it
// with what the other used, and what the ledger books counts at once.
func TestMeterSharesTheRunCap(t *testing.T) {
	caps := []Cap{{"loop.max_tokens", state.ScopeRun, state.UnitTokens, 1000}}
	m := NewMeter(state.Usage{InputTokens: 200})
	a := NewAllowance(caps, state.Usage{}, state.Usage{InputTokens: 200})
	b := NewAllowance(caps, state.Usage{}, state.Usage{InputTokens: 200})
	la, lb := m.Begin(a), m.Begin(b)
	if h := a.Check(state.Usage{InputTokens: 300}); h != nil {
		t.Fatalf("a stopped alone: %v", h)
	}
	if h := b.Check(state.Usage{InputTokens: 499}); h != nil {
		t.Fatalf("b stopped at 999: %v", h)
	}
	if h := b.Check(state.Usage{InputTokens: 500}); h == nil || h.Used != 1000 {
		t.Fatalf("b not stopped at 1000 with a's 300: %+v", h)
	}
	// a's run ends: the ledger books it, then it stops counting as live.
	m.Book(state.Usage{InputTokens: 300})
	la.End()
	if h := b.Check(state.Usage{InputTokens: 499}); h != nil {
		t.Fatalf("a's usage counted twice: %v", h)
	}
	lb.End()
	c := NewAllowance(caps, state.Usage{}, state.Usage{InputTokens: 500})
	m.Begin(c)
	if h := c.Check(state.Usage{InputTokens: 500}); h == nil {
		t.Fatal("the booked usage is not counted")
	}
}

func TestNotice(t *testing.T) {
	if got := Notice(config.Default(), nil); got != "" {
		t.Fatalf("a notice without caps: %q", got)
	}
	cfg := config.Default()
	cfg.Loop.MaxTokens = 100000
	cfg.Loop.TaskMaxCostUSD = 0.5
	cfg.Executor.Price = config.Price{InputPerMTok: 1, OutputPerMTok: 2}
	cfg.Fallbacks = []config.Executor{{Name: "cl", Preset: config.PresetClaude}, {Name: "mine", Preset: config.PresetCommand, Command: []string{"x"}}}
	cfg.Review.Enabled = true
	cfg.Review.Executor = config.Executor{Name: "codex", Preset: config.PresetCodex, Args: []string{"--ephemeral"}}
	tr := &tree.Tree{Version: 1, Root: &tree.Node{ID: "r", Title: "R", MaxTokens: ptr(int64(5))}}
	got := Notice(cfg, tr)
	for _, want := range []string{
		"runner: spend caps: the run 100.0k tokens; each task $0.50; 1 node of tree.json with caps of their own\n",
		"runner:   codex: tokens enforced while it works (its session log); cost enforced while it works (its session log, priced by executor.price)\n",
		"runner:   cl: tokens enforced while it works (the usage of its stream-json events); cost applied only at the end of each of its runs (its own total_cost_usd; set executor.price to enforce it while it works)\n",
		"runner:   mine: applied at the end of each of its runs, from the usage it reports then (if any): preset command reports no usage while it runs\n",
		"runner:   codex (review): tokens applied only at the end of each of its runs (--ephemeral: codex keeps no session log); cost never counted (Codex reports no cost: set executor.price)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("notice lacks %q:\n%s", want, got)
		}
	}
}

func TestUnknownExecutors(t *testing.T) {
	cfg := config.Default()
	tr := &tree.Tree{Version: 1, Root: &tree.Node{ID: "r", Title: "R", Children: []*tree.Node{
		{ID: "a", Title: "A", Executors: []string{"codex", "huge"}}}}}
	err := UnknownExecutors(cfg, tr, ".runner/tree.json")
	if err == nil || !strings.Contains(err.Error(), `.runner/tree.json: r/a: executors item 2: "huge" is not an executor of config.toml; name [executor] or a [[fallback]] ("codex" [executor])`) {
		t.Fatalf("error = %v", err)
	}
	tr.Root.Children[0].Executors = []string{"codex"}
	if err := UnknownExecutors(cfg, tr, ""); err != nil {
		t.Fatal(err)
	}
}
