// Command gentree writes a synthetic task tree for the benchmarks in
// BENCHMARKS.md, in the canonical form the runner itself writes:
//
//	go run ./bench/gentree [-done FRACTION] N FILE
//
// Node i > 0 hangs below node (i-1)/10 (fan-out 10), every node has a
// title, a goal and one acceptance item, and every node but the first
// child of its parent depends on its previous sibling. With -done, the
// leaves in that leading fraction of the tree (in depth-first order) are
// done, so that selection walks them before it finds work.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/runner-cli/runner/internal/tree"
)

func main() {
	done := flag.Float64("done", 0, "fraction of the leaves, in tree order, marked done")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: gentree [-done FRACTION] N FILE")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	n, err := strconv.Atoi(flag.Arg(0))
	if err != nil || n < 1 {
		fmt.Fprintf(os.Stderr, "gentree: %q is not a positive number of nodes\n", flag.Arg(0))
		os.Exit(2)
	}
	t := Generate(n, *done)
	if err := t.Validate(""); err != nil {
		fmt.Fprintf(os.Stderr, "gentree: the generated tree is invalid: %v\n", err)
		os.Exit(1)
	}
	if err := os.WriteFile(flag.Arg(1), tree.Marshal(t), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gentree:", err)
		os.Exit(1)
	}
}

// Generate builds the tree described in the package comment.
func Generate(n int, done float64) *tree.Tree {
	nodes := make([]*tree.Node, n)
	for i := range n {
		nodes[i] = &tree.Node{ID: fmt.Sprintf("n%d", i), Title: fmt.Sprintf("Node %d of the generated tree", i),
			Goal: fmt.Sprintf("Implement part %d of the system and its tests.", i), Acceptance: []string{"go test ./... passes"}}
		if i > 0 {
			p := nodes[(i-1)/10]
			if len(p.Children) > 0 {
				nodes[i].DependsOn = []string{p.Children[len(p.Children)-1].ID}
			}
			p.Children = append(p.Children, nodes[i])
		}
	}
	var leaves []*tree.Node
	var walk func(*tree.Node)
	walk = func(nd *tree.Node) {
		if nd.IsLeaf() {
			leaves = append(leaves, nd)
		}
		for _, c := range nd.Children {
			walk(c)
		}
	}
	walk(nodes[0])
	for _, l := range leaves[:int(done*float64(len(leaves)))] {
		l.Status = tree.StatusDone
	}
	t := &tree.Tree{Version: tree.Version, Root: nodes[0]}
	t.Normalize()
	return t
}
