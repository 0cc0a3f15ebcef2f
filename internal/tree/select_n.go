package tree

// SelectN returns up to n leaves to work on at once, in §2 order: the
// first leaves of Select's walk that the tree's marks let run (open,
// attempts left, depends_on done, no blocked ancestor), leaving out
//
//   - the leaves named in inFlight, the tasks other slots are working on
//     (an id of a node with children stands for every leaf under it;
//     an id that is not in the tree is ignored), and
//   - every leaf that depends on a leaf already chosen or in flight, or
//     that such a leaf depends on. A leaf depends on another when its
//     depends_on, or an ancestor's, names that leaf or a node holding it.
//
// Leaves whose dependencies are not done cannot run anyway, so the second
// rule changes nothing while the marks are current; it is applied on its
// own so that marks that lag behind the slots (an in-flight task marked
// done, a dependency of one reopened) never put two dependent tasks to
// work at once. n below 1 counts as 1. ix must index t (nil builds one).
//
// The Selection is Select's for the same tree, with these differences:
// Node and Path are the first leaf returned; Skipped lists the leaves
// that are not done and not returned up to that one (all of them when
// none is returned), where a leaf the marks let run gives the reason it
// was left out ("in flight", "waits for X (in flight)", "in-flight X
// waits for it"); and State is Busy when Select would find a leaf but
// every such leaf is in flight or conflicts with one that is. So with
// nothing in flight the Selection is exactly Select's, whatever n is.
//
// State reads the tree, not the slots: Complete or Stuck with slots still
// running means nothing more can start, and a caller ends the run only
// once they have finished and a new selection says so again (what they
// record may change it).
func SelectN(t *Tree, ix *Index, defaultMaxAttempts, n int, inFlight []string) ([]*Node, Selection) {
	m := newMarks(t, ix, defaultMaxAttempts)
	fl := m.fl
	c := newClaims(&m)
	for _, id := range inFlight {
		if i, ok := m.ix.byID[id]; ok {
			c.claimInFlight(i)
		}
	}
	n = max(n, 1)
	var sel Selection
	var out []*Node
	held := false // a leaf the marks let run was left out for a claim
	for i := range int32(len(fl.nodes)) {
		c.visit(i)
		if !m.tally(&sel, i) || len(out) == n {
			continue
		}
		reason := m.reason(i)
		if reason == "" {
			if reason = c.conflict(i); reason != "" {
				held = true
			}
		}
		if reason == "" {
			if len(out) == 0 {
				sel.Node, sel.Path = fl.nodes[i], fl.path(i)
			}
			out = append(out, fl.nodes[i])
			c.claim(i)
			continue
		}
		if len(out) == 0 {
			sel.Skipped = append(sel.Skipped, Skip{Path: fl.path(i), ID: fl.nodes[i].ID, Reason: reason})
		}
	}
	sel.State = m.state(&sel, len(out) > 0)
	if len(out) == 0 && held {
		sel.State = Busy
	}
	return out, sel
}

// claims tracks the leaves taken in one SelectN (in flight in other
// slots, or chosen by it) and the leaves they rule out. Claiming a leaf
// marks its ancestors-or-self as holding a taken leaf and the targets of
// their depends_on as needed by it; visiting the nodes in pre-order then
// carries both down to the leaves.
type claims struct {
	m        *marks
	inFlight []bool  // a leaf named by inFlight, or under a node it names
	holds    []bool  // the node is, or holds, a taken leaf
	neededBy []int32 // a taken node whose depends_on (own or inherited) names it, or -1
	// Set by visit, parents before children:
	under   []int32 // neededBy of the node or its nearest ancestor with one, or -1
	waitsOn []int32 // like marks.wait: the first depends_on entry (own, else inherited) that holds a taken leaf, or -1
}

func newClaims(m *marks) *claims {
	n := len(m.fl.nodes)
	c := &claims{m: m, inFlight: make([]bool, n), holds: make([]bool, n),
		neededBy: make([]int32, n), under: make([]int32, n), waitsOn: make([]int32, n)}
	for i := range c.neededBy {
		c.neededBy[i] = -1
	}
	return c
}

// claimInFlight takes node i and, when it has children, every node under
// it. Call it before the walk.
func (c *claims) claimInFlight(i int32) {
	for j := i; j < c.m.fl.end[i]; j++ {
		if !c.inFlight[j] {
			c.inFlight[j] = true
			c.mark(j, i)
		}
	}
	c.claimFrom(c.m.fl.parent[i], i)
}

// claim takes leaf i.
func (c *claims) claim(i int32) { c.claimFrom(i, i) }

// claimFrom marks node a and its ancestors as holding taken node by, and
// the nodes their depends_on name as needed by it. A chain already marked
// by an earlier claim is not walked again, so all the claims of a
// selection together cost one pass over the tree.
func (c *claims) claimFrom(a, by int32) {
	for ; a >= 0 && !c.holds[a]; a = c.m.fl.parent[a] {
		c.mark(a, by)
	}
}

// mark records that node a holds taken node by.
func (c *claims) mark(a, by int32) {
	c.holds[a] = true
	for _, d := range c.m.ix.deps(a) {
		if d >= 0 && c.neededBy[d] < 0 {
			c.neededBy[d] = by
		}
	}
}

// visit carries the claims from node i's parent down to i. A claim made
// during the walk (a leaf SelectN chooses) reaches only the nodes visited
// after it. The only nodes it misses that lead to later leaves are its
// own ancestors, and for one of them to carry it, an ancestor's
// depends_on would have to name a node holding the claimed leaf, or the
// claimed leaf's would have to name an ancestor: the leaf would wait for
// itself, and the marks would not have let it be chosen.
func (c *claims) visit(i int32) {
	u, w := int32(-1), int32(-1)
	if p := c.m.fl.parent[i]; p >= 0 {
		u, w = c.under[p], c.waitsOn[p]
	}
	if c.neededBy[i] >= 0 {
		u = c.neededBy[i]
	}
	for _, d := range c.m.ix.deps(i) {
		if d >= 0 && c.holds[d] {
			w = d
			break
		}
	}
	c.under[i], c.waitsOn[i] = u, w
}

// conflict says why visited leaf i may not start beside the taken leaves;
// "" when it may. The words name in-flight work, the only kind that can
// conflict with a leaf the marks let run.
func (c *claims) conflict(i int32) string {
	nodes := c.m.fl.nodes
	switch {
	case c.inFlight[i]:
		return "in flight"
	case c.waitsOn[i] >= 0:
		return "waits for " + nodes[c.waitsOn[i]].ID + " (in flight)"
	case c.under[i] >= 0:
		return "in-flight " + nodes[c.under[i]].ID + " waits for it"
	}
	return ""
}
