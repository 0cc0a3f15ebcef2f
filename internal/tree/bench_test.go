package tree

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// genTree builds a tree of n nodes with fan-out 10 (node i's parent is
// (i-1)/10), where each node depends on its previous sibling and the
// leaves in the first nine tenths of the root's children are done, so
// Select walks most of the tree before it finds work.
func genTree(n int) *Tree {
	nodes := make([]*Node, n)
	for i := range n {
		nodes[i] = &Node{ID: fmt.Sprintf("n%d", i), Title: fmt.Sprintf("Node %d", i),
			Goal: "Do the thing described here.", Acceptance: []string{"go test ./... passes"}}
		if i > 0 {
			p := nodes[(i-1)/10]
			if len(p.Children) > 0 {
				nodes[i].DependsOn = []string{p.Children[len(p.Children)-1].ID}
			}
			p.Children = append(p.Children, nodes[i])
		}
	}
	for i := 1; i < n; i++ {
		top := i
		for (top-1)/10 != 0 {
			top = (top - 1) / 10
		}
		if nodes[i].IsLeaf() && top <= 9 {
			nodes[i].Status = StatusDone
		}
	}
	return &Tree{Version: Version, Root: nodes[0]}
}

var benchSizes = []int{1_000, 10_000, 100_000}

func BenchmarkLoad(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "tree.json")
			data := Marshal(genTree(n))
			if err := os.WriteFile(path, data, 0o644); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Load(path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSelect(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			tr := genTree(n)
			ix := NewIndex(tr)
			if sel := Select(tr, ix, 3); sel.State != Selectable {
				b.Fatalf("generated tree is %v", sel.State)
			}
			b.ReportAllocs()
			for b.Loop() {
				Select(tr, ix, 3)
			}
		})
	}
}

// BenchmarkSelectN selects four leaves while the leaf Select would pick
// is in flight (in the generated tree the others wait for it): the cost
// of a selection for parallel slots, to compare with BenchmarkSelect.
func BenchmarkSelectN(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			tr := genTree(n)
			ix := NewIndex(tr)
			inFlight := []string{Select(tr, ix, 3).Node.ID}
			if _, sel := SelectN(tr, ix, 3, 4, inFlight); sel.State != Busy {
				b.Fatalf("generated tree is %v", sel.State)
			}
			b.ReportAllocs()
			for b.Loop() {
				SelectN(tr, ix, 3, 4, inFlight)
			}
		})
	}
}

// BenchmarkNext is what `runner next` does: load, index, select.
func BenchmarkNext(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "tree.json")
			if err := os.WriteFile(path, Marshal(genTree(n)), 0o644); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				tr, err := Load(path)
				if err != nil {
					b.Fatal(err)
				}
				Select(tr, NewIndex(tr), 3)
			}
		})
	}
}

func BenchmarkSave(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "tree.json")
			tr := genTree(n)
			b.ReportAllocs()
			for b.Loop() {
				if err := Save(path, tr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
