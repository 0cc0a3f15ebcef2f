package status

import (
	"github.com/runner-cli/runner/internal/state"
)

// How far the tests are (SPEC §18), from the guards' and the checks'
// reports: for the run, what the guards found on the run branch's last
// checkpoint (its baseline) against what they found when the run's
// preflight ran; for each task with checks, what its checks' reports
// said at its last iteration that ran them, against what they said on
// the untouched checkpoint before its first attempt.

// runTests tallies the guards' tests on the run branch's last checkpoint;
// nil when no baseline with a report is known.
func runTests(p state.Paths, rs *state.RunState) *state.TestTally {
	key, digest := state.WorktreeBaseline, ""
	if pf := rs.Preflight; pf != nil {
		key, digest = pf.Commit, pf.Guards
	}
	b, err := state.LoadBaseline(p, key, digest)
	if err != nil || b == nil {
		return nil
	}
	t := state.TallyOf(b)
	if t == nil {
		return nil
	}
	switch {
	case rs.Preflight != nil && rs.Preflight.Passing != nil:
		base := *rs.Preflight.Passing
		t.Baseline = &base
	case rs.Preflight == nil:
		base := t.Passing // without checkpoints, the preflight's is the one known
		t.Baseline = &base
	}
	return t
}

// taskTests tallies, for each task, the tests of its own checks at its
// last iteration that ran them, from the journal's records of ended
// iterations (oldest first), the baseline from its checks before its
// first attempt.
func taskTests(recs []state.Record) map[string]*state.TestTally {
	out := map[string]*state.TestTally{}
	before := map[string]int{}
	for _, r := range recs {
		if r.Node == "" {
			continue
		}
		if r.ChecksBefore != nil {
			before[r.Node] = r.ChecksBefore.Passing
		}
		if r.Checks != nil {
			t := *r.Checks
			out[r.Node] = &t
		}
	}
	for node, t := range out {
		if b, ok := before[node]; ok && t.Baseline == nil {
			t.Baseline = &b
		}
	}
	return out
}

// addTaskTests sets the tests of each node of the status tree that has
// checks and a tally.
func addTaskTests(n *TreeNode, tests map[string]*state.TestTally) {
	if n == nil {
		return
	}
	if len(n.Checks) > 0 {
		n.Tests = tests[n.ID]
	}
	for _, c := range n.Children {
		addTaskTests(c, tests)
	}
}
