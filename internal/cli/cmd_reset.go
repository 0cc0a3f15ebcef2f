package cli

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

func newResetCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "reset NODE",
		Short: "Reopen a blocked task and set its attempts to 0",
		Long: `Reopen the task NODE (an id): its status becomes open, its attempts 0 and its
blocked reason is cleared. For a task with subtasks, every blocked or
exhausted subtask under it is reopened.

A task in flight is not reset: when a runner is working on NODE or a task
under it, or a runner that stopped left such an iteration unfinished, the
record of that iteration would undo the reset. reset names the iteration and
exits 1; wait until it is recorded ("runner status" shows it), or
"runner stop" and reset once the runner has exited.

One race remains. tree.json is checked again after the reset is saved, so a
runner that started an iteration on the task in between is reported the same
way (run reset again once that iteration is recorded). A runner that read
tree.json just before the save but starts its iteration only after that
second check, a window of a millisecond or so, is not seen: its record puts
the attempts back. After resetting a task a running runner could pick,
"runner status" tells whether the reset held.

EXIT STATUS
  0  reopened, or nothing to reopen
  1  no such task, a task in flight, or an error reading or writing the files`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeTasks(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReset(g, args[0])
		},
	}
}

func runReset(g *globals, id string) error {
	p, t, ix, n, err := taskToChange(g, "reset", id)
	if err != nil {
		return err
	}
	seen, err := refuseInFlight("reset", p, ix, id)
	if err != nil {
		return err
	}
	wasDone := map[string]bool{}
	reopened := changeLeaves(n, func(x *tree.Node) bool {
		if x != n && (x.EffectiveStatus() == tree.StatusDone || x.Status != tree.StatusBlocked && x.Attempts == 0) {
			return false // a task under n that is done, or neither blocked nor tried, stays
		}
		wasDone[x.ID] = x.EffectiveStatus() == tree.StatusDone
		x.Status, x.Attempts, x.BlockedReason = "", 0, ""
		return true
	})
	t.Normalize()
	// The journal's record first: a runner that sees the reset tree then
	// finds what makes its change of runner-owned fields legitimate.
	if err := state.AppendJournal(p.Journal(), state.Record{Node: id, Event: state.EventReset}); err != nil {
		return err
	}
	if err := tree.Save(p.Tree(), t); err != nil {
		return err
	}
	if len(reopened) == 0 {
		fmt.Fprintf(g.streams.Out, "%s: nothing to reopen\n", inert.Line(ix.Path(id)))
		return nil
	}
	raced := startedMeanwhile(p, seen, reopened)
	for _, r := range reopened {
		if raced == nil || r != raced.Node {
			done := ""
			if wasDone[r] {
				done = ", which was done: it runs again, and its commit stays on the run branch"
			}
			fmt.Fprintf(g.streams.Out, "reopened %s (attempts 0)%s\n", inert.Line(ix.Path(r)), done)
		}
	}
	if raced != nil {
		return fmt.Errorf("reset: iteration %d started on %s while the reset was being saved, from tree.json as it was before; "+
			"its record will set the attempts back to %d. Run `runner reset %s` again once it is recorded (`runner status` shows when)",
			raced.Iteration, inert.Line(ix.Path(raced.Node)), raced.Attempts+1, id)
	}
	return nil
}

// taskToChange loads the tree for a command (verb) that changes task
// id's runner-owned fields, and finds the task.
func taskToChange(g *globals, verb, id string) (state.Paths, *tree.Tree, *tree.Index, *tree.Node, error) {
	p, err := g.paths()
	if err != nil {
		return p, nil, nil, nil, err
	}
	t, err := tree.Load(p.Tree())
	if err != nil {
		return p, nil, nil, nil, err
	}
	ix := tree.NewIndex(t)
	n := ix.Node(id)
	if n == nil {
		return p, nil, nil, nil, fmt.Errorf("%s: no task with id %q in %s (`runner status` lists them)", verb, id, rel(p, p.Tree()))
	}
	return p, t, ix, n, nil
}

// changeLeaves calls change on every task under n that has no subtasks
// (on n itself when it has none) and returns, in tree order, the ids of
// those change changed (it returned true). A blocked task with subtasks
// on the way is unblocked: its status follows its subtasks' again.
func changeLeaves(n *tree.Node, change func(leaf *tree.Node) bool) []string {
	var changed []string
	var visit func(*tree.Node)
	visit = func(x *tree.Node) {
		if x.IsLeaf() {
			if change(x) {
				changed = append(changed, x.ID)
			}
			return
		}
		if x.Status == tree.StatusBlocked {
			x.Status, x.BlockedReason = "", ""
		}
		for _, c := range x.Children {
			visit(c)
		}
	}
	visit(n)
	return changed
}

// refuseInFlight returns an error, starting with verb (the command that
// refuses), naming the iteration in flight when it
// works on task id or a task under it: that iteration's record would undo
// a reset. Otherwise it returns the journal's last started iteration, for
// startedMeanwhile.
func refuseInFlight(verb string, p state.Paths, ix *tree.Index, id string) (seen int, err error) {
	rs, err := state.LoadRunState(p.RunState())
	if err != nil {
		// The journal's started records tell an iteration under way too.
		rs = &state.RunState{Version: state.RunStateVersion}
	}
	rec, _, err := state.LastStart(p.Journal())
	if err != nil {
		return 0, fmt.Errorf(verb+": cannot tell whether a task is in flight: %w", err)
	}
	if rec != nil {
		seen = rec.Iteration
	}
	var in, reach *state.InFlight
	for _, f := range state.CurrentInFlights(p, rs) { // one per parallel slot
		if under(ix, f.Node, id) && in == nil {
			in = f
		}
		if f.JudgesRunnerFiles && reach == nil {
			reach = f
		}
	}
	if in == nil && reach == nil {
		return seen, nil
	}
	held, holder, err := state.LockHolder(p)
	if err != nil {
		return 0, fmt.Errorf(verb+": read %s: %w", rel(p, p.Lock()), err)
	}
	if in == nil {
		if !held {
			return seen, nil // recorded by the next run, which judges nothing of this
		}
		return 0, fmt.Errorf(verb+": iteration %d on %s is under way, and its agent can reach .runner/ (it is not confined to a worktree): "+
			"a change there now cannot be told from the agent's, and would fail its attempt and be put back. "+
			"`runner pause`, wait until `runner status` says the run is paused, reset, then `runner resume`",
			reach.Iteration, inert.Line(reach.Node))
	}
	task := inert.Line(in.Node)
	if ix.Node(in.Node) != nil {
		task = inert.Line(ix.Path(in.Node))
	}
	if held {
		return 0, fmt.Errorf(verb+": iteration %d is working on %s (phase %s since %s; the lock is %s), and its record would undo the reset. "+
			"Wait until it is recorded (`runner status` shows when), or `runner stop` and reset once the runner has exited",
			in.Iteration, task, inert.Line(in.Phase), in.StartedAt.Local().Format("15:04:05"), inert.Line(holder))
	}
	return 0, fmt.Errorf(verb+": iteration %d on %s was left unfinished (phase %s) by a runner that stopped; the next `runner run` "+
		"records it first, and that record would undo the reset. Let a run record it (`runner run --once` records it, then runs at most "+
		"one more iteration), then reset; or, when recording it fails, set it aside with `runner abandon %d`", in.Iteration, task, inert.Line(in.Phase), in.Iteration)
}

// under reports whether node is the task id or lies under it.
func under(ix *tree.Index, node, id string) bool {
	for x := ix.Node(node); x != nil; x = ix.Parent(x.ID) {
		if x.ID == id {
			return true
		}
	}
	return node == id
}

// startedMeanwhile returns the started record of an iteration a runner
// began after refuseInFlight looked (the journal's last started record is
// newer than seen) on one of the reopened tasks, from tree.json as it was
// before the reset (its attempts then were not 0): that iteration's
// record will undo the reset of its task. It returns nil otherwise.
func startedMeanwhile(p state.Paths, seen int, reopened []string) *state.Record {
	rec, _, err := state.LastStart(p.Journal())
	if err != nil || rec == nil || rec.Iteration <= seen || rec.Attempts == 0 || !slices.Contains(reopened, rec.Node) {
		return nil
	}
	return rec
}
