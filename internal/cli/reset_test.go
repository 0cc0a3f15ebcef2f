package cli

import (
	"os"
	"testing"

	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

func TestUnder(t *testing.T) {
	tr := &tree.Tree{Version: tree.Version, Root: &tree.Node{ID: "app", Children: []*tree.Node{
		{ID: "a", Children: []*tree.Node{{ID: "a1"}}},
		{ID: "b"},
	}}}
	ix := tree.NewIndex(tr)
	tests := []struct {
		node, id string
		want     bool
	}{
		{"a1", "a1", true},
		{"a1", "a", true},
		{"a1", "app", true},
		{"b", "a", false},
		{"a", "a1", false},
		{"gone", "gone", true}, // removed from the tree meanwhile: still itself
		{"gone", "app", false},
	}
	for _, tt := range tests {
		if got := under(ix, tt.node, tt.id); got != tt.want {
			t.Errorf("under(%s, %s) = %v, want %v", tt.node, tt.id, got, tt.want)
		}
	}
}

// A runner that starts an iteration on a reopened task between reset's
// check and its save selected it from tree.json as it was before: its
// record will undo the reset, and reset must say so.
func TestStartedMeanwhile(t *testing.T) {
	tests := []struct {
		name     string
		started  *state.Record // appended after the check; nil: none
		reopened []string
		want     bool
	}{
		{"nothing started", nil, []string{"a"}, false},
		{"started on the task from the old tree", &state.Record{Iteration: 5, Node: "a", Attempts: 2}, []string{"a"}, true},
		{"started on the task from the reset tree", &state.Record{Iteration: 5, Node: "a", Attempts: 0}, []string{"a"}, false},
		{"started on another task", &state.Record{Iteration: 5, Node: "b", Attempts: 2}, []string{"a"}, false},
		{"started on one of the reopened tasks", &state.Record{Iteration: 5, Node: "a2", Attempts: 1}, []string{"a1", "a2"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := state.NewPaths(t.TempDir())
			if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
				t.Fatal(err)
			}
			add := func(r state.Record) {
				if err := state.AppendJournal(p.Journal(), r); err != nil {
					t.Fatal(err)
				}
			}
			add(state.Record{Iteration: 4, Node: "a", Event: state.EventStarted, Attempts: 1})
			add(state.Record{Iteration: 4, Node: "a", Event: state.EventRecorded, Attempts: 2})
			seen := 4
			if tt.started != nil {
				r := *tt.started
				r.Event = state.EventStarted
				add(r)
			}
			got := startedMeanwhile(p, seen, tt.reopened)
			if (got != nil) != tt.want {
				t.Fatalf("startedMeanwhile = %+v, want a record: %v", got, tt.want)
			}
			if got != nil && got.Iteration != 5 {
				t.Errorf("startedMeanwhile names iteration %d, want 5", got.Iteration)
			}
		})
	}
}
