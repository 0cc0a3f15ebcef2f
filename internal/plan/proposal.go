package plan

import (
	"errors"
	"fmt"
	"strings"

	"github.com/runner-cli/runner/internal/tree"
)

// InvalidError is a plan that cannot become the tree: every problem
// found, one per line, each naming the node by its path.
type InvalidError struct {
	Problems []string
}

func (e *InvalidError) Error() string {
	noun := "problems"
	if len(e.Problems) == 1 {
		noun = "problem"
	}
	return fmt.Sprintf("the plan is invalid (%d %s); tree.json is unchanged:\n%s", len(e.Problems), noun, strings.Join(e.Problems, "\n"))
}

// invalid turns a validation error into an InvalidError whose problems
// name label (where the plan can be read) as their file.
func invalid(err error, label string) error {
	var ve *tree.ValidationError
	if !errors.As(err, &ve) {
		return &InvalidError{Problems: []string{label + ": " + err.Error()}}
	}
	e := &InvalidError{}
	for _, p := range ve.Problems {
		p.File = label
		e.Problems = append(e.Problems, p.String())
	}
	if ve.More > 0 {
		e.Problems = append(e.Problems, fmt.Sprintf("%s: ... and %d more problems", label, ve.More))
	}
	return e
}

// WholeTree returns the tree a plan of the whole tree makes: its one
// top-level task is the root. It is validated as tree.json is (SPEC §2);
// the error is an *InvalidError whose problems name label as their file.
func WholeTree(children []*tree.Node, label string) (*tree.Tree, error) {
	if len(children) != 1 {
		ids := make([]string, 0, len(children))
		for _, c := range children {
			ids = append(ids, fmt.Sprintf("%q", c.ID))
		}
		return nil, &InvalidError{Problems: []string{fmt.Sprintf(
			"%s: the plan has %d top-level tasks (%s); a plan of the whole tree has exactly one, the root, with the others under it",
			label, len(children), strings.Join(ids, ", "))}}
	}
	t := &tree.Tree{Version: tree.Version, Root: children[0]}
	if err := t.Validate(label); err != nil {
		return nil, invalid(err, label)
	}
	return t, nil
}

// Decomposition returns a copy of current with children added under the
// task id, validated with the whole tree as a decomposition is
// (tree.AddChildren); current is not changed. The error is an
// *InvalidError whose problems name label as their file.
func Decomposition(current *tree.Tree, id string, children []*tree.Node, label string) (*tree.Tree, error) {
	t := current.Clone()
	if err := t.AddChildren(nil, id, children); err != nil {
		return nil, invalid(err, label)
	}
	return t, nil
}

// Progress lists, by path, the tasks of t that a run has touched: done,
// blocked, or with attempts spent. Replacing t loses them.
func Progress(t *tree.Tree) []string {
	if t == nil || t.Root == nil {
		return nil
	}
	ix := tree.NewIndex(t)
	var out []string
	t.Walk(func(n *tree.Node) {
		if n.Status == tree.StatusDone || n.Status == tree.StatusBlocked || n.Attempts > 0 {
			out = append(out, ix.Path(n.ID))
		}
	})
	return out
}

// Open checks that task id of t can be decomposed: it exists, has no
// children, and is open.
func Open(t *tree.Tree, ix *tree.Index, id string) (*tree.Node, error) {
	n := ix.Node(id)
	switch {
	case n == nil:
		return nil, fmt.Errorf("no task with id %q in tree.json (`runner status` lists them)", id)
	case !n.IsLeaf():
		return nil, fmt.Errorf("task %s already has subtasks; plan one of them with --node, or remove them from tree.json first", ix.Path(id))
	case n.Status == tree.StatusDone:
		return nil, fmt.Errorf("task %s is done; there is nothing left to decompose", ix.Path(id))
	case n.Status == tree.StatusBlocked:
		return nil, fmt.Errorf("task %s is blocked (%s); reopen it first with `runner reset %s`", ix.Path(id), n.BlockedReason, id)
	}
	return n, nil
}

// count is the number of nodes in the trees under nodes.
func count(nodes []*tree.Node) int {
	n := 0
	for _, c := range nodes {
		n += 1 + count(c.Children)
	}
	return n
}
