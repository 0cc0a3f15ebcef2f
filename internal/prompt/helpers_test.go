package prompt

import (
	"fmt"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/tree"
)

func intp(n int) *int { return &n }

// calcTree is the small example tree of the spec, with some history.
func calcTree() *tree.Tree {
	return &tree.Tree{Version: 1, Root: &tree.Node{
		ID: "calc", Title: "Calculator CLI",
		Goal:       "A calculator command that adds, subtracts, multiplies and divides.",
		Acceptance: []string{"go test ./... passes"},
		Children: []*tree.Node{
			{ID: "parse", Title: "Parse arguments", Goal: "Parse `calc 1 + 2`.", Status: tree.StatusDone},
			{ID: "ops", Title: "Operations", Goal: "Implement + - * /.\nDivision by zero is an error.",
				Acceptance: []string{"go test ./ops passes", "calc 6 / 0 exits 2"},
				DependsOn:  []string{"parse"}, MaxAttempts: intp(5), Attempts: 1},
			{ID: "docs", Title: "Document usage", Status: tree.StatusBlocked, BlockedReason: "attempts exhausted", Attempts: 3},
			{ID: "release", Title: "Release", Children: []*tree.Node{
				{ID: "tag", Title: "Tag v1"},
			}},
		},
	}}
}

// calcWithin is what goal.md says of the root above "ops" (as
// context.RenderWithin writes it): the whole tree's goal and acceptance.
const calcWithin = "\n## Within\n\nThis task is part of the groups below (the whole tree first); what they ask for holds for it too.\n" +
	"\n### calc: Calculator CLI\n\ngoal: A calculator command that adds, subtracts, multiplies and divides.\nacceptance:\n- go test ./... passes\n"

// calcInput is a full Input for the "ops" node with every section filled.
// calcProtect are the verify.protect globs of calcInput.
var calcProtect = []string{"ops/*_test.go"}

func calcInput(t testing.TB) Input {
	t.Helper()
	tr := calcTree()
	ix := tree.NewIndex(tr)
	return Input{
		Goal:               "# Goal\n\ntitle: Operations\ngoal: Implement + - * /.\n  Division by zero is an error.\nacceptance:\n- go test ./ops passes\n- calc 6 / 0 exits 2\n" + calcWithin,
		History:            "# History (previous attempt)\n\nAdded + and -; * and / not started.\n",
		Failure:            "# Failure (previous attempt)\n\n# github.com/x/calc/ops\nops/div.go:3:5: undefined: big\n",
		Tree:               tr,
		Index:              ix,
		Selected:           ix.Node("ops"),
		SelectedPath:       "calc/ops",
		DefaultMaxAttempts: 3,
		Assumptions:        "# Assumptions\n\n- [iteration 1, node ops] integers only\n",
		Questions:          "# Open Questions\n\n- [iteration 1, node ops] should 7/2 print 3.5?\n",
		Budget:             40960,
		Protect:            calcProtect,
	}
}

// wideTree builds a tree of about n nodes: fanout children per node, level
// by level, with ids "n<number>".
func wideTree(n, fanout int) *tree.Tree {
	root := &tree.Node{ID: "n0", Title: "root"}
	queue := []*tree.Node{root}
	count := 1
	for len(queue) > 0 && count < n {
		p := queue[0]
		queue = queue[1:]
		for i := 0; i < fanout && count < n; i++ {
			c := &tree.Node{ID: fmt.Sprintf("n%d", count), Title: fmt.Sprintf("Task %d", count)}
			if count%7 == 0 {
				c.Status = tree.StatusDone
			}
			p.Children = append(p.Children, c)
			queue = append(queue, c)
			count++
		}
	}
	return &tree.Tree{Version: 1, Root: root}
}

// deepest returns the last node of the last path in pre-order: a leaf at the
// bottom right of the tree.
func deepest(t *tree.Tree) (*tree.Node, []*tree.Node) {
	path := []*tree.Node{t.Root}
	for n := t.Root; len(n.Children) > 0; {
		n = n.Children[len(n.Children)/2]
		path = append(path, n)
	}
	return path[len(path)-1], path
}

func headings(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "# ") {
			out = append(out, line)
		}
	}
	return out
}
