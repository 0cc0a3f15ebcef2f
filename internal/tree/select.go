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
)

func (s State) String() string {
	switch s {
	case Selectable:
		return "selectable"
	case Complete:
		return "complete"
	case Stuck:
		return "stuck"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Skip is a leaf that is not done and was passed over, with the reason.
type Skip struct {
	Path   string
	ID     string
	Reason string
}

// Selection is the result of Select.
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
	if ix == nil || t == nil || ix.root != t.Root {
		ix = NewIndex(t)
	}
	fl := ix.fl
	nodes := fl.nodes
	n := int32(len(nodes))
	var sel Selection
	if n == 0 {
		sel.State = Complete
		return sel
	}
	// Leaf counts per subtree, children before parents.
	leafTotal := make([]int32, n)
	leafDone := make([]int32, n)
	for i := n - 1; i >= 0; i-- {
		if !fl.hasKids(i) {
			leafTotal[i] = 1
			if nodes[i].Status == StatusDone {
				leafDone[i] = 1
			}
		}
		if p := fl.parent[i]; p >= 0 {
			leafTotal[p] += leafTotal[i]
			leafDone[p] += leafDone[i]
		}
	}
	// wait[i]: the first depends_on entry of i, or else of its nearest
	// ancestor, that is not done (-1: none; -2: an unknown id).
	// blockedAbove[i]: the nearest ancestor whose status is blocked, or -1.
	wait := make([]int32, n)
	blockedAbove := make([]int32, n)
	for i := int32(0); i < n; i++ {
		w, b := int32(-1), int32(-1)
		if p := fl.parent[i]; p >= 0 {
			w, b = wait[p], blockedAbove[p]
			if nodes[p].Status == StatusBlocked {
				b = p
			}
		}
		for _, d := range ix.depTo[ix.depStart[i]:ix.depStart[i+1]] {
			if d < 0 {
				w = -2
				break
			}
			if leafDone[d] != leafTotal[d] {
				w = d
				break
			}
		}
		wait[i], blockedAbove[i] = w, b
	}
	for i := int32(0); i < n; i++ {
		nd := nodes[i]
		if nd.Status == StatusBlocked {
			sel.Blocked = append(sel.Blocked, nd)
		}
		if fl.hasKids(i) {
			continue
		}
		sel.TotalLeaves++
		if nd.Status == StatusDone {
			sel.DoneLeaves++
			continue
		}
		if sel.Node != nil {
			continue
		}
		var reason string
		switch limit := nd.AttemptLimit(defaultMaxAttempts); {
		case nd.Status == StatusBlocked:
			reason = "blocked"
			if nd.BlockedReason != "" {
				reason += ": " + nd.BlockedReason
			}
		case blockedAbove[i] >= 0:
			reason = "inside blocked " + fl.path(blockedAbove[i])
		case nd.Attempts >= limit:
			reason = fmt.Sprintf("attempts %d of %d used", nd.Attempts, limit)
		case wait[i] == -2:
			reason = "waits for an unknown id"
		case wait[i] >= 0:
			d := wait[i]
			dn := nodes[d]
			var state string
			switch {
			case fl.hasKids(d):
				state = fmt.Sprintf("%d of %d leaves done", leafDone[d], leafTotal[d])
			case dn.Status == StatusBlocked:
				state = "blocked"
			case dn.Attempts >= dn.AttemptLimit(defaultMaxAttempts):
				state = "attempts exhausted"
			default:
				state = "open"
			}
			reason = "waits for " + dn.ID + " (" + state + ")"
		}
		if reason == "" {
			sel.Node, sel.Path = nd, fl.path(i)
			continue
		}
		sel.Skipped = append(sel.Skipped, Skip{Path: fl.path(i), ID: nd.ID, Reason: reason})
	}
	switch {
	case sel.Node != nil:
		sel.State = Selectable
	case sel.DoneLeaves == sel.TotalLeaves:
		sel.State = Complete
	default:
		sel.State = Stuck
	}
	return sel
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
