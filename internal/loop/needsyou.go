package loop

import (
	"fmt"
	"strings"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/outcome"
	"github.com/runner-cli/runner/internal/tree"
)

// stuckMessage is the end of a run stopped by blocked tasks: each with
// what it waits for (its question, or its attempts used up) and the
// exact command to go on.
func stuckMessage(blocked []*tree.Node, ix *tree.Index) string {
	var parts []string
	for _, n := range blocked {
		parts = append(parts, blockedLine(n, ix.Path(n.ID)))
	}
	return "stuck: " + strings.Join(parts, "; ")
}

// blockedLine says of one blocked task what it waits for and how to go
// on, on one line.
func blockedLine(n *tree.Node, path string) string {
	id := inert.Line(n.ID)
	reason := inert.Line(n.BlockedReason) // printed as a one-line field
	if reason == "" {
		reason = "no reason given"
	}
	head := fmt.Sprintf("blocked: %s (%s)", inert.Line(path), reason)
	if n.BlockedReason == outcome.ReasonExhausted {
		return head + fmt.Sprintf("; fix the cause (`runner show` has what failed), then `runner reset %s` to reopen it", id)
	}
	if outcome.IsCostCap(n.BlockedReason) {
		return head + fmt.Sprintf("; raise the cap and it reopens, or `runner reset %s` to give it its attempts and its budget again, or `runner skip %s`", id, id)
	}
	return head + fmt.Sprintf("; answer it with `runner answer %s \"your answer\"` (it reopens the task, the answer in its prompt), or `runner skip %s`", id, id)
}
