package tree

import "fmt"

// AddChildren appends children to the node parentID, as for a decomposed
// outcome. The new nodes (and any nodes below them) must pass every rule
// of Validate against the whole tree: valid and unique ids, fields,
// depends_on targets, no cycles, depth. On error the tree is unchanged
// and the error wraps a *ValidationError naming each problem by node
// path. On success ix is rebuilt to index the changed tree. The tree
// takes ownership of the children.
func (t *Tree) AddChildren(ix *Index, parentID string, children []*Node) error {
	if ix == nil {
		ix = NewIndex(t)
	}
	p := ix.Node(parentID)
	if p == nil {
		return fmt.Errorf("add children to %q: no node has this id", parentID)
	}
	path := ix.Path(parentID)
	if len(children) == 0 {
		return fmt.Errorf("add children to %s: no children given", path)
	}
	old := p.Children
	p.Children = append(old[:len(old):len(old)], children...)
	if err := t.Validate(""); err != nil {
		p.Children = old
		return fmt.Errorf("add children to %s: %w", path, err)
	}
	*ix = *NewIndex(t)
	return nil
}
