package status

import (
	"github.com/runner-cli/runner/internal/outcome"
)

// NeedsYou is a task blocked now, with what it waits for and the exact
// command that lets it go on.
type NeedsYou struct {
	Node string `json:"node"`
	Path string `json:"path"`
	// Question is its blocked_reason: the agent's question(s), a
	// reviewer's reasons, or "attempts exhausted".
	Question string `json:"question"`
	// Command goes on: `runner answer ID "your answer"`, or for used-up
	// attempts `runner reset ID` once the cause is fixed, and for a task
	// over its spend cap `runner reset ID` (raising the cap reopens it
	// too).
	Command string `json:"command"`
}

// needsYou lists the blocked leaves of the tree, in tree order.
func needsYou(root *TreeNode) []NeedsYou {
	var out []NeedsYou
	var walk func(n *TreeNode, path string)
	walk = func(n *TreeNode, path string) {
		if path != "" {
			path += "/"
		}
		path += n.ID
		if len(n.Children) == 0 && n.Status == "blocked" {
			cmd := `runner answer ` + n.ID + ` "your answer"`
			if n.BlockedReason == outcome.ReasonExhausted || outcome.IsCostCap(n.BlockedReason) {
				cmd = "runner reset " + n.ID
			}
			out = append(out, NeedsYou{Node: n.ID, Path: path, Question: n.BlockedReason, Command: cmd})
		}
		for _, c := range n.Children {
			walk(c, path)
		}
	}
	if root != nil {
		walk(root, "")
	}
	return out
}
