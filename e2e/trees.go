package e2e

import (
	"encoding/json"
	"fmt"

	"github.com/runner-cli/runner/internal/tree"
)

func WalkTree(n *tree.Node, fn func(*tree.Node)) {
	fn(n)
	for _, c := range n.Children {
		WalkTree(c, fn)
	}
}

// ChainTree returns a tree of n leaves under a root, in groups of four,
// each leaf depending on the one before it in its group.
func ChainTree(prefix string, n int) string {
	type node struct {
		ID        string   `json:"id"`
		Title     string   `json:"title"`
		Goal      string   `json:"goal,omitempty"`
		DependsOn []string `json:"depends_on,omitempty"`
		Children  []*node  `json:"children,omitempty"`
	}
	root := &node{ID: prefix, Title: "Crash test " + prefix}
	var group *node
	for i := 0; i < n; i++ {
		if i%4 == 0 {
			group = &node{ID: fmt.Sprintf("%s-g%d", prefix, i/4), Title: "Group"}
			root.Children = append(root.Children, group)
		}
		leaf := &node{ID: fmt.Sprintf("%s-%03d", prefix, i), Title: fmt.Sprintf("Step %d", i), Goal: "Append a line to work/ID.txt."}
		if i%4 != 0 {
			leaf.DependsOn = []string{fmt.Sprintf("%s-%03d", prefix, i-1)}
		}
		group.Children = append(group.Children, leaf)
	}
	data, _ := json.MarshalIndent(map[string]any{"version": 1, "root": root}, "", "  ")
	return string(data) + "\n"
}
