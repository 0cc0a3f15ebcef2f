package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

func newSkipCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "skip NODE",
		Short: "Mark a task done without running it",
		Long: `Mark the task NODE (an id) done without an agent working on it: its
status becomes done and its blocked reason is cleared; its attempts stay as
they are. For a task with subtasks, every task under it that is not done is
marked done. The skip is recorded in the journal, and "runner status" and
"runner report" show it.

A task's status, attempts and blocked reason are the runner's: an edit of
them in tree.json is not taken. "runner skip" and "runner reset" are the
ways to change them.

A task in flight is not skipped, as for "runner reset".

EXIT STATUS
  0  marked done, or already done
  1  no such task, a task in flight, or an error reading or writing the files`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeTasks(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSkip(g, args[0])
		},
	}
}

func runSkip(g *globals, id string) error {
	p, t, ix, n, err := taskToChange(g, "skip", id)
	if err != nil {
		return err
	}
	if _, err := refuseInFlight("reset", p, ix, id); err != nil {
		return err
	}
	skipped := changeLeaves(n, func(x *tree.Node) bool {
		if x.Status == tree.StatusDone {
			return false
		}
		x.Status, x.BlockedReason = tree.StatusDone, ""
		return true
	})
	if len(skipped) == 0 {
		fmt.Fprintf(g.streams.Out, "%s: already done\n", inert.Line(ix.Path(id)))
		return nil
	}
	t.Normalize()
	for _, s := range skipped {
		if err := state.AppendJournal(p.Journal(), state.Record{Node: s, Event: state.EventSkipped}); err != nil {
			return err
		}
	}
	if err := tree.Save(p.Tree(), t); err != nil {
		return err
	}
	for _, s := range skipped {
		fmt.Fprintf(g.streams.Out, "skipped %s (done without running)\n", inert.Line(ix.Path(s)))
	}
	return nil
}
