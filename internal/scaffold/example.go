package scaffold

import (
	"sync"

	"github.com/runner-cli/runner/internal/tree"
)

// exampleNodes are the nodes of every example tree Init can write, by
// title and goal: what a node left from an example still carries, even
// after the runner wrote its status or a person replaced its siblings.
var exampleNodes = sync.OnceValue(func() map[[2]string]bool {
	out := map[[2]string]bool{}
	for _, data := range exampleTrees() {
		t, err := tree.Parse("example", data)
		if err != nil {
			continue // TestExampleTreesUsable keeps them valid
		}
		t.Walk(func(n *tree.Node) { out[[2]string{n.Title, n.Goal}] = true })
	}
	return out
})

// IsExample reports whether t is one of the example trees Init writes,
// whatever the runner wrote in its runner-owned fields (status,
// attempts, blocked_reason): its tasks are still the example's, not a
// person's.
func IsExample(t *tree.Tree) bool {
	if t == nil || t.Root == nil {
		return false
	}
	c := t.Clone()
	c.Walk(func(n *tree.Node) { n.Status, n.Attempts, n.BlockedReason = "", 0, "" })
	return IsExampleTree(tree.Marshal(c))
}

// IsExampleRoot reports whether n is an example tree's root: its title
// says to replace the tree, or its title and goal are an example's.
func IsExampleRoot(n *tree.Node) bool {
	return n != nil && (n.Title == ExampleTitle || exampleNodes()[[2]string{n.Title, n.Goal}])
}

// ExampleLeftovers lists, by path, the nodes of t that an example tree
// left: the root when it is an example's (IsExampleRoot), and every task
// whose title and goal are an example task's. Empty when t holds none.
func ExampleLeftovers(t *tree.Tree) []string {
	if t == nil || t.Root == nil {
		return nil
	}
	ix := tree.NewIndex(t)
	var out []string
	t.Walk(func(n *tree.Node) {
		if n == t.Root && IsExampleRoot(n) || n != t.Root && exampleNodes()[[2]string{n.Title, n.Goal}] {
			out = append(out, ix.Path(n.ID))
		}
	})
	return out
}
