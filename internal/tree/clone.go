package tree

import "slices"

// Clone returns a deep copy of t: changing one never changes the other.
// Strings are shared (they are immutable); nodes and lists are copied,
// with all nodes in one allocation and all lists in a few more, so
// cloning is much cheaper than parsing the tree again. t must be valid
// (see Validate).
func (t *Tree) Clone() *Tree {
	if t == nil {
		return nil
	}
	out := &Tree{Version: t.Version}
	if t.Root == nil {
		return out
	}
	// One walk sizes the slabs, a second copies into them.
	n, kids, strs, ints := 0, 0, 0, 0
	stack := []*Node{t.Root}
	for len(stack) > 0 {
		nd := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n++
		kids += len(nd.Children)
		strs += len(nd.Acceptance) + len(nd.DependsOn) + len(nd.Removes) + len(nd.Executors)
		if nd.MaxAttempts != nil {
			ints++
		}
		for _, ch := range nd.Children {
			if ch != nil {
				stack = append(stack, ch)
			}
		}
	}
	nodes := make([]Node, n)
	kidSlab := make([]*Node, kids)
	strSlab := make([]string, strs)
	intSlab := make([]int, ints)
	// Each stack entry is a node to copy and the slot its copy goes into.
	type item struct {
		from *Node
		to   **Node
	}
	next := 0
	work := []item{{t.Root, &out.Root}}
	for len(work) > 0 {
		it := work[len(work)-1]
		work = work[:len(work)-1]
		c := &nodes[next]
		next++
		*c = *it.from
		*it.to = c
		if k := len(c.Acceptance); k > 0 {
			c.Acceptance = strSlab[:k:k]
			copy(c.Acceptance, it.from.Acceptance)
			strSlab = strSlab[k:]
		}
		if len(c.Checks) > 0 {
			c.Checks = slices.Clone(c.Checks)
		}
		if k := len(c.DependsOn); k > 0 {
			c.DependsOn = strSlab[:k:k]
			copy(c.DependsOn, it.from.DependsOn)
			strSlab = strSlab[k:]
		}
		if k := len(c.Removes); k > 0 {
			c.Removes = strSlab[:k:k]
			copy(c.Removes, it.from.Removes)
			strSlab = strSlab[k:]
		}
		if c.MaxAttempts != nil {
			intSlab[0] = *c.MaxAttempts
			c.MaxAttempts = &intSlab[0]
			intSlab = intSlab[1:]
		}
		if k := len(c.Executors); k > 0 {
			c.Executors = strSlab[:k:k]
			copy(c.Executors, it.from.Executors)
			strSlab = strSlab[k:]
		}
		cloneSpendCaps(c)
		if k := len(c.Children); k > 0 {
			c.Children = kidSlab[:k:k]
			kidSlab = kidSlab[k:]
			for i := k - 1; i >= 0; i-- {
				if from := it.from.Children[i]; from != nil {
					work = append(work, item{from, &c.Children[i]})
				}
			}
		}
	}
	return out
}
