package tree

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestSelectN(t *testing.T) {
	const (
		abc       = `{"id": "r", "title": "R", "children": [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}, {"id": "c", "title": "C"}]}`
		withOps   = `{"id": "r", "title": "R", "children": [{"id": "x", "title": "X", "depends_on": ["ops"]}, {"id": "ops", "title": "O", "children": [{"id": "mul", "title": "M"}, {"id": "div", "title": "D"}]}, {"id": "y", "title": "Y"}]}`
		staleDone = `{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "status": "done"}, {"id": "b", "title": "B", "depends_on": ["a"]}, {"id": "c", "title": "C"}]}`
	)
	tests := []struct {
		name     string
		root     string
		n        int
		inFlight []string
		want     []string // ids, in order
		state    State
		skipped  []Skip
	}{
		{"independent siblings all run", abc, 3, nil, []string{"a", "b", "c"}, Selectable, nil},
		{"no more than n", abc, 2, nil, []string{"a", "b"}, Selectable, nil},
		{"n larger than what can run", abc, 10, nil, []string{"a", "b", "c"}, Selectable, nil},
		{"n below 1 counts as 1", abc, 0, nil, []string{"a"}, Selectable, nil},
		{"a sibling that depends on another waits",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A"}, {"id": "b", "title": "B", "depends_on": ["a"]}, {"id": "c", "title": "C"}]}`,
			3, nil, []string{"a", "c"}, Selectable, nil},
		{"only the first when the others depend on it",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A"}, {"id": "b", "title": "B", "depends_on": ["a"]}]}`,
			3, nil, []string{"a"}, Selectable, nil},
		{"an ancestor's depends_on holds for its leaves",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A"}, {"id": "p", "title": "P", "depends_on": ["a"], "children": [{"id": "p1", "title": "P1"}, {"id": "p2", "title": "P2"}]}, {"id": "c", "title": "C"}]}`,
			4, nil, []string{"a", "c"}, Selectable, nil},
		{"depending on an inner node waits for all its leaves", withOps, 4, nil, []string{"mul", "div", "y"}, Selectable,
			[]Skip{{"r/x", "x", "waits for ops (0 of 2 leaves done)"}}},
		{"done, blocked and exhausted leaves are passed over",
			`{"id": "r", "title": "R", "children": [
				{"id": "a", "title": "A", "status": "done"},
				{"id": "b", "title": "B", "status": "blocked"},
				{"id": "c", "title": "C", "attempts": 3},
				{"id": "p", "title": "P", "status": "blocked", "children": [{"id": "p1", "title": "P1"}]},
				{"id": "d", "title": "D", "attempts": 4, "max_attempts": 5},
				{"id": "e", "title": "E"}]}`,
			5, nil, []string{"d", "e"}, Selectable, []Skip{
				{"r/b", "b", "blocked"},
				{"r/c", "c", "attempts 3 of 3 used"},
				{"r/p/p1", "p1", "inside blocked r/p"},
			}},
		{"in-flight leaves are not chosen again", abc, 3, []string{"a", "c"}, []string{"b"}, Selectable,
			[]Skip{{"r/a", "a", "in flight"}}},
		{"a leaf waiting for an in-flight one",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A"}, {"id": "b", "title": "B", "depends_on": ["a"]}, {"id": "c", "title": "C"}]}`,
			3, []string{"a"}, []string{"c"}, Selectable, []Skip{
				{"r/a", "a", "in flight"},
				{"r/b", "b", "waits for a (open)"},
			}},
		{"every leaf that could run is in flight", abc, 3, []string{"a", "b", "c"}, nil, Busy, []Skip{
			{"r/a", "a", "in flight"}, {"r/b", "b", "in flight"}, {"r/c", "c", "in flight"},
		}},
		{"an in-flight inner node holds every leaf under it", withOps, 4, []string{"ops"}, []string{"y"}, Selectable, []Skip{
			{"r/x", "x", "waits for ops (0 of 2 leaves done)"},
			{"r/ops/mul", "mul", "in flight"},
			{"r/ops/div", "div", "in flight"},
		}},
		{"an id that is not in the tree is ignored", abc, 2, []string{"gone"}, []string{"a", "b"}, Selectable, nil},

		// Marks that lag behind the slots.
		{"stale: depends on an in-flight leaf marked done", staleDone, 3, []string{"a"}, []string{"c"}, Selectable,
			[]Skip{{"r/b", "b", "waits for a (in flight)"}}},
		{"stale: nothing else can start", staleDone, 3, []string{"a", "c"}, nil, Busy, []Skip{
			{"r/b", "b", "waits for a (in flight)"},
			{"r/c", "c", "in flight"},
		}},
		{"stale: an ancestor depends on an in-flight leaf marked done",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "status": "done"}, {"id": "p", "title": "P", "depends_on": ["a"], "children": [{"id": "p1", "title": "P1"}]}, {"id": "c", "title": "C"}]}`,
			3, []string{"a"}, []string{"c"}, Selectable, []Skip{{"r/p/p1", "p1", "waits for a (in flight)"}}},
		{"stale: depends on an inner node holding an in-flight leaf",
			`{"id": "r", "title": "R", "children": [{"id": "x", "title": "X", "depends_on": ["ops"]}, {"id": "ops", "title": "O", "children": [{"id": "mul", "title": "M", "status": "done"}, {"id": "div", "title": "D", "status": "done"}]}, {"id": "y", "title": "Y"}]}`,
			3, []string{"mul"}, []string{"y"}, Selectable, []Skip{{"r/x", "x", "waits for ops (in flight)"}}},
		{"stale: an in-flight leaf depends on a reopened one",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A"}, {"id": "b", "title": "B", "depends_on": ["a"]}, {"id": "c", "title": "C"}]}`,
			3, []string{"b"}, []string{"c"}, Selectable, []Skip{
				{"r/a", "a", "in-flight b waits for it"},
				{"r/b", "b", "waits for a (open)"}, // the marks come first
			}},
		{"stale: an in-flight leaf's ancestor depends on an inner node",
			`{"id": "r", "title": "R", "children": [{"id": "q", "title": "Q", "children": [{"id": "q1", "title": "Q1"}, {"id": "q2", "title": "Q2"}]}, {"id": "p", "title": "P", "depends_on": ["q"], "children": [{"id": "p1", "title": "P1"}]}, {"id": "c", "title": "C"}]}`,
			3, []string{"p1"}, []string{"c"}, Selectable, []Skip{
				{"r/q/q1", "q1", "in-flight p1 waits for it"},
				{"r/q/q2", "q2", "in-flight p1 waits for it"},
				{"r/p/p1", "p1", "waits for q (0 of 2 leaves done)"},
			}},

		{"complete stays complete",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "status": "done"}]}`,
			2, []string{"a"}, nil, Complete, nil},
		{"stuck stays stuck, whatever is in flight",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "status": "blocked"}, {"id": "b", "title": "B", "depends_on": ["a"]}]}`,
			2, []string{"a"}, nil, Stuck, []Skip{
				{"r/a", "a", "blocked"},
				{"r/b", "b", "waits for a (blocked)"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := mustParse(t, doc(tt.root))
			ix := NewIndex(tr)
			got, sel := SelectN(tr, ix, 3, tt.n, tt.inFlight)
			if ids := nodeIDs(got); !slices.Equal(ids, tt.want) {
				t.Errorf("chose %q, want %q", ids, tt.want)
			}
			if sel.State != tt.state {
				t.Errorf("State = %v, want %v", sel.State, tt.state)
			}
			var first *Node
			if len(got) > 0 {
				first = got[0]
			}
			if sel.Node != first || first != nil && sel.Path != ix.Path(first.ID) || first == nil && sel.Path != "" {
				t.Errorf("Node, Path = %v, %q; want the first leaf chosen", sel.Node, sel.Path)
			}
			if !reflect.DeepEqual(sel.Skipped, tt.skipped) {
				t.Errorf("Skipped = %q, want %q", sel.Skipped, tt.skipped)
			}
			plain := Select(tr, ix, 3)
			if sel.DoneLeaves != plain.DoneLeaves || sel.TotalLeaves != plain.TotalLeaves || !slices.Equal(sel.Blocked, plain.Blocked) {
				t.Errorf("counts or blocked differ from Select: %+v, %+v", sel, plain)
			}
			if len(tt.inFlight) == 0 && !reflect.DeepEqual(sel, plain) {
				t.Errorf("with nothing in flight the Selection differs from Select's:\n%+v\n%+v", sel, plain)
			}
		})
	}
}

// The rule against two dependent leaves at once is applied to the leaves
// SelectN chooses as well, not only through their marks: claimed in
// tree order, a chosen leaf rules out those that depend on it and those
// it depends on, marks or no marks.
func TestClaimsRuleOutDependentLeaves(t *testing.T) {
	tr := mustParse(t, doc(`{"id": "r", "title": "R", "children": [
		{"id": "a", "title": "A", "depends_on": ["q"]},
		{"id": "b", "title": "B", "depends_on": ["a"]},
		{"id": "p", "title": "P", "depends_on": ["a"], "children": [{"id": "p1", "title": "P1"}]},
		{"id": "q", "title": "Q", "children": [{"id": "q1", "title": "Q1"}]},
		{"id": "c", "title": "C"}]}`))
	ix := NewIndex(tr)
	m := newMarks(tr, ix, 3)
	c := newClaims(&m)
	want := map[string]string{
		"b":  "waits for a (in flight)",
		"p1": "waits for a (in flight)",
		"q1": "in-flight a waits for it",
		"c":  "",
	}
	for i := range int32(ix.Len()) {
		c.visit(i)
		id := ix.fl.nodes[i].ID
		if id == "a" {
			c.claim(i)
			continue
		}
		if w, ok := want[id]; ok {
			if got := c.conflict(i); got != w {
				t.Errorf("conflict(%s) = %q, want %q", id, got, w)
			}
		}
	}
}

func TestSelectNMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	shape, marks := make([]byte, 64), make([]byte, 32)
	for range 10000 {
		for i := range shape {
			shape[i] = byte(rng.IntN(256))
		}
		for i := range marks {
			marks[i] = byte(rng.IntN(256))
		}
		checkSelectN(t, shape, marks, uint8(rng.IntN(6)))
	}
}

func FuzzSelectN(f *testing.F) {
	f.Add([]byte{3, 0, 0, 5, 1, 5, 0, 0}, []byte{0, 0, 0, 1, 0, 0, 21, 2}, uint8(2))
	f.Add([]byte{5, 0, 1, 1, 0, 4, 2, 5, 3, 0, 0, 5, 1}, []byte{0, 0, 22, 1, 0, 0, 0, 5, 0, 255, 26, 0}, uint8(3))
	f.Add([]byte{7, 0, 0, 1, 1, 2, 2, 4, 0, 5, 1, 5, 3}, []byte{0, 2, 0, 0, 224, 0, 21, 1, 0, 0, 0, 0}, uint8(4))
	f.Fuzz(checkSelectN)
}

// checkSelectN builds a random tree (see treeFromBytes), sets its marks
// and the tasks in flight from marks, and holds SelectN to refSelectN and
// to Select.
func checkSelectN(t *testing.T, shape, marks []byte, n uint8) {
	t.Helper()
	tr := treeFromBytes(shape)
	inFlight := setMarks(tr, marks)
	ix := NewIndex(tr)
	got, sel := SelectN(tr, ix, 3, int(n), inFlight)
	want, runnable := refSelectN(tr, 3, int(n), inFlight)
	if !slices.Equal(got, want) {
		t.Fatalf("SelectN(n=%d, in flight %q) chose %q, the reference %q\n%s", n, inFlight, nodeIDs(got), nodeIDs(want), Marshal(tr))
	}
	plain := Select(tr, ix, 3)
	if len(inFlight) == 0 && !reflect.DeepEqual(sel, plain) {
		t.Fatalf("with nothing in flight the Selection differs from Select's:\n%+v\n%+v\n%s", sel, plain, Marshal(tr))
	}
	wantState := plain.State
	switch {
	case len(got) > 0:
		wantState = Selectable
	case plain.State == Selectable:
		wantState = Busy
	}
	if sel.State != wantState || sel.DoneLeaves != plain.DoneLeaves || sel.TotalLeaves != plain.TotalLeaves ||
		!slices.Equal(sel.Blocked, plain.Blocked) {
		t.Fatalf("Selection %+v does not match Select's %+v (state %v wanted)\n%s", sel, plain, wantState, Marshal(tr))
	}
	// Skipped: every leaf not done and not chosen, up to the first chosen.
	var wantSkipped []string
	tr.Walk(func(nd *Node) {
		if len(got) > 0 && nd == got[0] {
			wantSkipped = append(wantSkipped, "stop")
		}
		if nd.IsLeaf() && nd.Status != StatusDone && !slices.Contains(wantSkipped, "stop") {
			wantSkipped = append(wantSkipped, nd.ID)
		}
	})
	wantSkipped = slices.DeleteFunc(wantSkipped, func(s string) bool { return s == "stop" })
	var skipped []string
	for _, s := range sel.Skipped {
		skipped = append(skipped, s.ID)
		inFlightWords := s.Reason == "in flight" || strings.HasPrefix(s.Reason, "in-flight ") || strings.HasSuffix(s.Reason, " (in flight)")
		if inFlightWords != runnable[s.ID] {
			t.Fatalf("%s skipped for %q, but the marks let it run: %v", s.ID, s.Reason, runnable[s.ID])
		}
	}
	if !slices.Equal(skipped, wantSkipped) {
		t.Fatalf("Skipped %q, want %q\n%s", skipped, wantSkipped, Marshal(tr))
	}
}

// setMarks gives the nodes of tr, in Walk order, statuses and attempts
// from two bytes of marks each, and returns the ids in flight: some
// leaves, now and then an inner node or an id not in the tree, whatever
// their marks say. Most nodes stay open with attempts left, so that
// several leaves can run.
func setMarks(tr *Tree, marks []byte) []string {
	var inFlight []string
	tr.Walk(func(nd *Node) {
		if len(marks) < 2 {
			return
		}
		b, f := marks[0], marks[1]
		marks = marks[2:]
		switch b % 32 {
		case 20:
			nd.Status = StatusOpen
		case 21, 22, 23, 24, 25:
			nd.Status = StatusDone
		case 26:
			nd.Status = StatusBlocked
		}
		nd.Attempts = int(b>>5) % 3
		if b>>5 == 7 {
			nd.Attempts = 3
		}
		switch {
		case f%4 == 1 && nd.IsLeaf(), f%16 == 2:
			inFlight = append(inFlight, nd.ID)
		case f == 255:
			inFlight = append(inFlight, "gone")
		}
	})
	return inFlight
}

// refSelectN is SelectN written plainly over pointers, following its
// rules word by word: the first runnable leaves in pre-order, none in
// flight, none depending on a taken one or a taken one depending on it.
// It also returns which leaves the marks alone let run.
func refSelectN(t *Tree, def, n int, inFlight []string) ([]*Node, map[string]bool) {
	parent := map[*Node]*Node{}
	byID := map[string]*Node{}
	var order []*Node
	t.Walk(func(nd *Node) {
		order = append(order, nd)
		if _, ok := byID[nd.ID]; !ok {
			byID[nd.ID] = nd
		}
		for _, ch := range nd.Children {
			parent[ch] = nd
		}
	})
	leaves := func(x *Node) []*Node {
		var out []*Node
		(&Tree{Root: x}).Walk(func(nd *Node) {
			if nd.IsLeaf() {
				out = append(out, nd)
			}
		})
		return out
	}
	holds := func(x, leaf *Node) bool {
		for y := leaf; y != nil; y = parent[y] {
			if y == x {
				return true
			}
		}
		return false
	}
	// dependsOn: a's depends_on, or an ancestor's, names a node holding b.
	dependsOn := func(a, b *Node) bool {
		for y := a; y != nil; y = parent[y] {
			for _, id := range y.DependsOn {
				if d := byID[id]; d != nil && holds(d, b) {
					return true
				}
			}
		}
		return false
	}
	canRun := func(l *Node) bool {
		if l.Status == StatusDone || l.Status == StatusBlocked || l.Attempts >= l.AttemptLimit(def) {
			return false
		}
		for y := l; y != nil; y = parent[y] {
			if y != l && y.Status == StatusBlocked {
				return false
			}
			for _, id := range y.DependsOn {
				d := byID[id]
				if d == nil {
					return false
				}
				for _, dl := range leaves(d) {
					if dl.Status != StatusDone {
						return false
					}
				}
			}
		}
		return true
	}
	var taken []*Node
	for _, id := range inFlight {
		if x := byID[id]; x != nil {
			taken = append(taken, leaves(x)...)
		}
	}
	runnable := map[string]bool{}
	var out []*Node
	for _, l := range order {
		if !l.IsLeaf() || !canRun(l) {
			continue
		}
		runnable[l.ID] = true
		if len(out) == max(n, 1) {
			continue
		}
		free := true
		for _, tk := range taken {
			if tk == l || dependsOn(l, tk) || dependsOn(tk, l) {
				free = false
			}
		}
		if free {
			out = append(out, l)
			taken = append(taken, l)
		}
	}
	return out, runnable
}

func nodeIDs(nodes []*Node) []string {
	var ids []string
	for _, n := range nodes {
		ids = append(ids, n.ID)
	}
	return ids
}
