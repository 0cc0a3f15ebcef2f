package tree

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestClone(t *testing.T) {
	trees := map[string]*Tree{"generated": genTree(500), "full node": mustParse(t, doc(`{"id": "calc", "title": "Calc", "children": [
		{"id": "parse", "title": "Parse", "goal": "g", "acceptance": ["a1", "a2"], "status": "done", "attempts": 1},
		{"id": "ops", "title": "Ops", "depends_on": ["parse"], "max_attempts": 5, "status": "blocked",
		 "attempts": 5, "blocked_reason": "attempts exhausted"}]}`))}
	for _, name := range []string{"messy.json", "canonical.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		trees[name] = mustParse(t, string(data))
	}
	for name, tr := range trees {
		t.Run(name, func(t *testing.T) {
			before := Marshal(tr)
			c := tr.Clone()
			if !reflect.DeepEqual(c, tr) {
				t.Fatalf("clone differs:\n%s\n%s", Marshal(c), before)
			}
			// Change everything in the clone; the original stays as it was.
			walk := []*Node{c.Root}
			for len(walk) > 0 {
				n := walk[len(walk)-1]
				walk = walk[:len(walk)-1]
				n.Title += " changed"
				n.Status = StatusBlocked
				n.Attempts++
				for i := range n.Acceptance {
					n.Acceptance[i] = "changed"
				}
				for i := range n.DependsOn {
					n.DependsOn[i] = "changed"
				}
				if n.MaxAttempts != nil {
					*n.MaxAttempts = 99
				}
				walk = append(walk, n.Children...)
				if len(n.Children) > 0 {
					n.Children = append(n.Children, &Node{ID: "added", Title: "Added"})
				}
			}
			if after := Marshal(tr); string(after) != string(before) {
				t.Errorf("changing the clone changed the original")
			}
		})
	}
	if (*Tree)(nil).Clone() != nil || (&Tree{Version: 1}).Clone().Root != nil {
		t.Error("nil tree or root not cloned as nil")
	}
}

func BenchmarkClone(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			tr := genTree(n)
			b.ReportAllocs()
			for b.Loop() {
				tr.Clone()
			}
		})
	}
}
