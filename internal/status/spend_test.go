package status

import (
	"testing"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// The caps in status: the run's against its total, each task's against
// the task not done that spent the most (a done task's spend no longer
// matters); a cost no agent reported is unknown, nothing spent is 0.
func TestCapsOf(t *testing.T) {
	tr := &tree.Tree{Version: 1, Root: &tree.Node{ID: "app", Title: "App", Children: []*tree.Node{
		{ID: "a", Title: "A", Status: tree.StatusDone}, {ID: "b", Title: "B"}, {ID: "c", Title: "C"}}}}
	l := config.Loop{MaxTokens: 10000, MaxCostUSD: 2, TaskMaxTokens: 3000, TaskMaxCostUSD: 1}
	rs := &state.RunState{Usage: state.Usage{InputTokens: 5000, OutputTokens: 500},
		UsageByTask: map[string]state.Usage{"a": {InputTokens: 4000}, "b": {InputTokens: 900, OutputTokens: 100}, "c": {InputTokens: 100}}}
	got := map[string]CapUse{}
	for _, c := range capsOf(l, tr, rs) {
		got[c.Key] = c
	}
	for key, want := range map[string]CapUse{
		"loop.max_tokens":        {Used: 5500, Known: true},
		"loop.max_cost_usd":      {Used: 0, Known: false},
		"loop.task_max_tokens":   {Used: 1000, Known: true},
		"loop.task_max_cost_usd": {Used: 0, Known: false},
	} {
		if c, ok := got[key]; !ok || c.Used != want.Used || c.Known != want.Known {
			t.Errorf("%s: %+v, want used %v known %v", key, c, want.Used, want.Known)
		}
	}
	rs.UsageByTask = nil
	for _, c := range capsOf(l, tr, rs) {
		if c.Scope == state.ScopeTask && (!c.Known || c.Used != 0) {
			t.Errorf("%s with no task spending: %+v, want 0 known", c.Key, c)
		}
	}
}
