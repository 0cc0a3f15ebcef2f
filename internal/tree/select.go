package tree

import (
	"fmt"
	"strconv"
)

// State says what Select found.
type State int

// The outcomes of Select.
const (
	// Selectable: a leaf can run next (Selection.Node).
	Selectable State = iota
	// Complete: every leaf is done.
	Complete
	// Stuck: leaves are left but none can run (blocked, attempts
	// exhausted, or waiting for such a node).
	Stuck
	// Busy (SelectN only): leaves could run by the tree's marks, but each
	// is in flight in another slot or conflicts with one that is, so
	// nothing more can start until a slot finishes. Select never returns
	// it: where SelectN says Busy, Select says Selectable.
	Busy
)

func (s State) String() string {
	switch s {
	case Selectable:
		return "selectable"
	case Complete:
		return "complete"
	case Stuck:
		return "stuck"
	case Busy:
		return "busy"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Skip is a leaf that is not done and was passed over, with the reason.
type Skip struct {
	Path   string
	ID     string
	Reason string
}

// Selection is the result of Select, and of SelectN (which says how its
// Selection differs).
type Selection struct {
	State State
	Node  *Node  // the selected leaf, when State is Selectable
	Path  string // its path
	// Skipped lists, in tree order, every leaf that is not done and comes
	// before the selected one, or all of them when none is selectable.
	Skipped []Skip
	// DoneLeaves and TotalLeaves count the leaves of the whole tree.
	DoneLeaves, TotalLeaves int
	// Blocked lists every node whose status is blocked, in tree order.
	Blocked []*Node
}

// Select picks the next leaf to run: in a depth-first, pre-order walk over
// children in array order, the first leaf that is open, has attempts below
// its limit (max_attempts, or defaultMaxAttempts), and whose depends_on
// nodes are all done. A node's depends_on also holds for every node below
// it, and a node with children is done exactly when all its leaves are
// (whatever its own status says). A leaf below a node whose status is
// blocked is not selected either. ix must index t (nil builds one).
//
// A leaf that is open but has used all its attempts is skipped as
// exhausted; marking it blocked is the caller's job.
func Select(t *Tree, ix *Index, defaultMaxAttempts int) Selection {
	m := newMarks(t, ix, defaultMaxAttempts)
	fl := m.fl
	var sel Selection
	for i := range int32(len(fl.nodes)) {
		if !m.tally(&sel, i) || sel.Node != nil {
			continue
		}
		if reason := m.reason(i); reason != "" {
			sel.Skipped = append(sel.Skipped, Skip{Path: fl.path(i), ID: fl.nodes[i].ID, Reason: reason})
			continue
		}
		sel.Node, sel.Path = fl.nodes[i], fl.path(i)
	}
	sel.State = m.state(&sel, sel.Node != nil)
	return sel
}

// marks is what the tree's marks (status, attempts) say about every node
// of an index, computed once per selection in linear time.
type marks struct {
	ix  *Index
	fl  *flat
	def int // the attempt limit of a node without max_attempts
	// Leaf counts per subtree.
	leafTotal, leafDone []int32
	// wait[i]: the first depends_on entry of i, or else of its nearest
	// ancestor, that is not done (-1: none; -2: an unknown id).
	// blockedAbove[i]: the nearest ancestor whose status is blocked, or -1.
	wait, blockedAbove []int32
}

// newMarks reads the marks of t, indexed by ix (nil, or an index of
// another tree, builds one).
func newMarks(t *Tree, ix *Index, defaultMaxAttempts int) marks {
	if ix == nil || t == nil || ix.root != t.Root {
		ix = NewIndex(t)
	}
	fl := ix.fl
	nodes := fl.nodes
	n := int32(len(nodes))
	m := marks{ix: ix, fl: fl, def: defaultMaxAttempts,
		leafTotal: make([]int32, n), leafDone: make([]int32, n),
		wait: make([]int32, n), blockedAbove: make([]int32, n)}
	// Children before parents.
	for i := n - 1; i >= 0; i-- {
		if !fl.hasKids(i) {
			m.leafTotal[i] = 1
			if nodes[i].Status == StatusDone {
				m.leafDone[i] = 1
			}
		}
		if p := fl.parent[i]; p >= 0 {
			m.leafTotal[p] += m.leafTotal[i]
			m.leafDone[p] += m.leafDone[i]
		}
	}
	// Parents before children.
	for i := range n {
		w, b := int32(-1), int32(-1)
		if p := fl.parent[i]; p >= 0 {
			w, b = m.wait[p], m.blockedAbove[p]
			if nodes[p].Status == StatusBlocked {
				b = p
			}
		}
		for _, d := range ix.deps(i) {
			if d < 0 {
				w = -2
				break
			}
			if !m.done(d) {
				w = d
				break
			}
		}
		m.wait[i], m.blockedAbove[i] = w, b
	}
	return m
}

// done reports whether every leaf under node i (or i itself, a leaf) is done.
func (m *marks) done(i int32) bool { return m.leafDone[i] == m.leafTotal[i] }

// tally adds node i to the counts and the blocked list of sel, and
// reports whether it is a leaf that is not done.
func (m *marks) tally(sel *Selection, i int32) bool {
	nd := m.fl.nodes[i]
	if nd.Status == StatusBlocked {
		sel.Blocked = append(sel.Blocked, nd)
	}
	if m.fl.hasKids(i) {
		return false
	}
	sel.TotalLeaves++
	if nd.Status == StatusDone {
		sel.DoneLeaves++
		return false
	}
	return true
}

// state is the State of a walk that tallied every node into sel and
// found a leaf to run or not.
func (m *marks) state(sel *Selection, found bool) State {
	switch {
	case found:
		return Selectable
	case sel.DoneLeaves == sel.TotalLeaves:
		return Complete
	default:
		return Stuck
	}
}

// reason says why the tree's marks keep leaf i, which is not done, from
// running; "" when they do not.
func (m *marks) reason(i int32) string {
	fl, nd := m.fl, m.fl.nodes[i]
	switch limit := nd.AttemptLimit(m.def); {
	case nd.Status == StatusBlocked:
		if nd.BlockedReason != "" {
			return "blocked: " + nd.BlockedReason
		}
		return "blocked"
	case m.blockedAbove[i] >= 0:
		return "inside blocked " + fl.path(m.blockedAbove[i])
	case nd.Attempts >= limit:
		return fmt.Sprintf("attempts %d of %d used", nd.Attempts, limit)
	case m.wait[i] == -2:
		return "waits for an unknown id"
	case m.wait[i] >= 0:
		d := m.wait[i]
		dn := fl.nodes[d]
		var state string
		switch {
		case fl.hasKids(d):
			state = fmt.Sprintf("%d of %d leaves done", m.leafDone[d], m.leafTotal[d])
		case dn.Status == StatusBlocked:
			state = "blocked"
		case dn.Attempts >= dn.AttemptLimit(m.def):
			state = "attempts exhausted"
		default:
			state = "open"
		}
		return "waits for " + dn.ID + " (" + state + ")"
	}
	return ""
}

// Normalize makes every node with children done exactly when all its
// children are done: such a node becomes done (clearing blocked_reason)
// when they all are, and a node marked done whose children are not all
// done becomes open again. Leaves are not changed. It reports whether
// anything changed. t must be valid (see Validate).
func (t *Tree) Normalize() bool {
	if t == nil || t.Root == nil {
		return false
	}
	fl := flattenNodes(t.Root, nil)
	n := int32(len(fl.nodes))
	notDone := make([]bool, n)
	changed := false
	for i := n - 1; i >= 0; i-- {
		nd := fl.nodes[i]
		var done bool
		if fl.hasKids(i) {
			done = !notDone[i]
			switch {
			case done && nd.Status != StatusDone:
				nd.Status, nd.BlockedReason = StatusDone, ""
				changed = true
			case !done && nd.Status == StatusDone:
				nd.Status = StatusOpen
				changed = true
			}
		} else {
			done = nd.Status == StatusDone
		}
		if p := fl.parent[i]; p >= 0 && !done {
			notDone[p] = true
		}
	}
	return changed
}
