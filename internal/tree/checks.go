package tree

// NodeCheck is a check with the node that carries it.
type NodeCheck struct {
	Node string
	Check
}

// ChecksOf are the checks that judge node id (SPEC §18): its own, and
// those of each ancestor whose last open leaf it is (they judge the
// group, and their failure is this task's).
func ChecksOf(t *Tree, id string) []NodeCheck {
	ix := NewIndex(t)
	node := ix.Node(id)
	if node == nil {
		return nil
	}
	var out []NodeCheck
	add := func(n *Node) {
		for _, c := range n.Checks {
			out = append(out, NodeCheck{n.ID, c})
		}
	}
	add(node)
	for a := ix.Parent(node.ID); a != nil; a = ix.Parent(a.ID) {
		if !lastOpenLeaf(a, node) {
			break
		}
		add(a)
	}
	return out
}

// RemovesOf are the tests node id's work may remove (SPEC §18): its own
// removes and its ancestors' (a group's removes hold for each of its
// tasks).
func RemovesOf(t *Tree, id string) []string {
	ix := NewIndex(t)
	var out []string
	for n := ix.Node(id); n != nil; n = ix.Parent(n.ID) {
		out = append(out, n.Removes...)
	}
	return out
}

// lastOpenLeaf reports whether every leaf below a but node is done.
func lastOpenLeaf(a, node *Node) bool {
	last := true
	var walk func(n *Node)
	walk = func(n *Node) {
		if !last || n == node {
			return
		}
		if n.IsLeaf() {
			last = n.EffectiveStatus() == StatusDone
			return
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(a)
	return last
}
