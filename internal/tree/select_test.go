package tree

import (
	"reflect"
	"strings"
	"testing"
)

func TestSelect(t *testing.T) {
	tests := []struct {
		name        string
		root        string
		state       State
		path        string // selected node path
		skipped     []Skip
		done, total int
		blocked     []string // ids
	}{
		{"first leaf in pre-order",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "children": [{"id": "a1", "title": "A1"}, {"id": "a2", "title": "A2"}]}, {"id": "b", "title": "B"}]}`,
			Selectable, "r/a/a1", nil, 0, 3, nil},
		{"done leaves are passed silently",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "children": [{"id": "a1", "title": "A1", "status": "done"}, {"id": "a2", "title": "A2"}]}, {"id": "b", "title": "B"}]}`,
			Selectable, "r/a/a2", nil, 1, 3, nil},
		{"a root without children is a leaf",
			`{"id": "r", "title": "R"}`,
			Selectable, "r", nil, 0, 1, nil},
		{"depends_on a leaf",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "depends_on": ["b"]}, {"id": "b", "title": "B"}]}`,
			Selectable, "r/b", []Skip{{"r/a", "a", "waits for b (open)"}}, 0, 2, nil},
		{"depends_on a done leaf",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "depends_on": ["b"]}, {"id": "b", "title": "B", "status": "done"}]}`,
			Selectable, "r/a", nil, 1, 2, nil},
		{"depends_on a parent that is not done",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "depends_on": ["p"]}, {"id": "p", "title": "P", "children": [{"id": "p1", "title": "P1", "status": "done"}, {"id": "p2", "title": "P2"}]}]}`,
			Selectable, "r/p/p2", []Skip{{"r/a", "a", "waits for p (1 of 2 leaves done)"}}, 1, 3, nil},
		{"depends_on a parent whose leaves are done, though its status says open",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "depends_on": ["p"]}, {"id": "p", "title": "P", "status": "open", "children": [{"id": "p1", "title": "P1", "status": "done"}]}]}`,
			Selectable, "r/a", nil, 1, 2, nil},
		{"a parent's depends_on holds for its leaves",
			`{"id": "r", "title": "R", "children": [{"id": "p", "title": "P", "depends_on": ["q"], "children": [{"id": "p1", "title": "P1"}]}, {"id": "q", "title": "Q"}]}`,
			Selectable, "r/q", []Skip{{"r/p/p1", "p1", "waits for q (open)"}}, 0, 2, nil},
		{"exhausted attempts with the default limit",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "attempts": 3}, {"id": "b", "title": "B"}]}`,
			Selectable, "r/b", []Skip{{"r/a", "a", "attempts 3 of 3 used"}}, 0, 2, nil},
		{"a node's own max_attempts wins",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "attempts": 3, "max_attempts": 4}, {"id": "b", "title": "B"}]}`,
			Selectable, "r/a", nil, 0, 2, nil},
		{"blocked leaf",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "status": "blocked", "blocked_reason": "attempts exhausted"}, {"id": "b", "title": "B"}]}`,
			Selectable, "r/b", []Skip{{"r/a", "a", "blocked: attempts exhausted"}}, 0, 2, []string{"a"}},
		{"blocked leaf without a reason",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "status": "blocked"}, {"id": "b", "title": "B"}]}`,
			Selectable, "r/b", []Skip{{"r/a", "a", "blocked"}}, 0, 2, []string{"a"}},
		{"leaves inside a blocked parent",
			`{"id": "r", "title": "R", "children": [{"id": "p", "title": "P", "status": "blocked", "children": [{"id": "p1", "title": "P1"}]}, {"id": "b", "title": "B"}]}`,
			Selectable, "r/b", []Skip{{"r/p/p1", "p1", "inside blocked r/p"}}, 0, 2, []string{"p"}},
		{"complete",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "status": "done"}, {"id": "b", "title": "B", "status": "done"}]}`,
			Complete, "", nil, 2, 2, nil},
		{"stuck lists every leaf that is not done",
			`{"id": "r", "title": "R", "children": [
				{"id": "a", "title": "A", "status": "done"},
				{"id": "b", "title": "B", "status": "blocked", "blocked_reason": "attempts exhausted", "attempts": 3},
				{"id": "c", "title": "C", "depends_on": ["b"]},
				{"id": "d", "title": "D", "attempts": 3},
				{"id": "e", "title": "E", "depends_on": ["d"]}]}`,
			Stuck, "", []Skip{
				{"r/b", "b", "blocked: attempts exhausted"},
				{"r/c", "c", "waits for b (blocked)"},
				{"r/d", "d", "attempts 3 of 3 used"},
				{"r/e", "e", "waits for d (attempts exhausted)"},
			}, 1, 5, []string{"b"}},
		{"blocked nodes after the selected one are still listed",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A"}, {"id": "b", "title": "B", "status": "blocked"}, {"id": "c", "title": "C"}]}`,
			Selectable, "r/a", nil, 0, 3, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := mustParse(t, doc(tt.root))
			sel := Select(tr, NewIndex(tr), 3)
			if sel.State != tt.state {
				t.Errorf("State = %v, want %v", sel.State, tt.state)
			}
			if sel.Path != tt.path {
				t.Errorf("Path = %q, want %q", sel.Path, tt.path)
			}
			var want *Node
			if tt.path != "" {
				want = NewIndex(tr).Node(tt.path[strings.LastIndexByte(tt.path, '/')+1:])
			}
			if sel.Node != want {
				t.Errorf("Node = %+v, want %+v", sel.Node, want)
			}
			if !reflect.DeepEqual(sel.Skipped, tt.skipped) {
				t.Errorf("Skipped = %q, want %q", sel.Skipped, tt.skipped)
			}
			if sel.DoneLeaves != tt.done || sel.TotalLeaves != tt.total {
				t.Errorf("leaves %d of %d done, want %d of %d", sel.DoneLeaves, sel.TotalLeaves, tt.done, tt.total)
			}
			var blocked []string
			for _, n := range sel.Blocked {
				blocked = append(blocked, n.ID)
			}
			if !reflect.DeepEqual(blocked, tt.blocked) {
				t.Errorf("Blocked = %q, want %q", blocked, tt.blocked)
			}
		})
	}
}

func TestSelectBuildsMissingOrStaleIndex(t *testing.T) {
	a := mustParse(t, doc(`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A"}]}`))
	b := mustParse(t, doc(`{"id": "s", "title": "S", "children": [{"id": "b", "title": "B"}]}`))
	if sel := Select(a, nil, 3); sel.Path != "r/a" {
		t.Errorf("nil index: selected %q", sel.Path)
	}
	if sel := Select(a, NewIndex(b), 3); sel.Path != "r/a" {
		t.Errorf("index of another tree: selected %q", sel.Path)
	}
}

func TestStateString(t *testing.T) {
	for s, want := range map[State]string{Selectable: "selectable", Complete: "complete", Stuck: "stuck", Busy: "busy", State(9): "State(9)"} {
		if got := s.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(s), got, want)
		}
	}
}

func TestIndex(t *testing.T) {
	tr := mustParse(t, doc(`{"id": "calc", "title": "C", "children": [{"id": "parse", "title": "P"}, {"id": "ops", "title": "O", "children": [{"id": "mul", "title": "M"}]}]}`))
	ix := NewIndex(tr)
	tests := []struct {
		id, path, parent string
	}{
		{"calc", "calc", ""},
		{"parse", "calc/parse", "calc"},
		{"mul", "calc/ops/mul", "ops"},
		{"nope", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			if got := ix.Path(tt.id); got != tt.path {
				t.Errorf("Path = %q, want %q", got, tt.path)
			}
			n := ix.Node(tt.id)
			if (n == nil) != (tt.path == "") || n != nil && n.ID != tt.id {
				t.Errorf("Node = %+v", n)
			}
			p := ix.Parent(tt.id)
			if got := ""; p != nil {
				got = p.ID
				if got != tt.parent {
					t.Errorf("Parent = %q, want %q", got, tt.parent)
				}
			} else if tt.parent != "" {
				t.Errorf("Parent = nil, want %q", tt.parent)
			}
		})
	}
	if ix.Len() != 4 {
		t.Errorf("Len = %d", ix.Len())
	}
}
