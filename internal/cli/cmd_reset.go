package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

func newResetCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "reset NODE",
		Short: "Reopen a blocked task and set its attempts to 0",
		Long: `Reopen the task NODE (an id): its status becomes open, its attempts 0 and its
blocked reason is cleared. For a task with subtasks, every blocked or
exhausted subtask under it is reopened.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReset(g, args[0])
		},
	}
}

func runReset(g *globals, id string) error {
	p, err := g.paths()
	if err != nil {
		return err
	}
	t, err := tree.Load(p.Tree())
	if err != nil {
		return err
	}
	ix := tree.NewIndex(t)
	n := ix.Node(id)
	if n == nil {
		return fmt.Errorf("reset: no task with id %q in %s (`runner status` lists them)", id, rel(p, p.Tree()))
	}
	var reopened []string
	var visit func(*tree.Node)
	visit = func(x *tree.Node) {
		if x.IsLeaf() {
			if x.EffectiveStatus() != tree.StatusDone || x == n {
				if x.Status == tree.StatusBlocked || x.Attempts > 0 || x == n {
					x.Status, x.Attempts, x.BlockedReason = "", 0, ""
					reopened = append(reopened, ix.Path(x.ID))
				}
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
	t.Normalize()
	if err := tree.Save(p.Tree(), t); err != nil {
		return err
	}
	if err := state.AppendJournal(p.Journal(), state.Record{Node: id, Event: state.EventReset}); err != nil {
		return err
	}
	if len(reopened) == 0 {
		fmt.Fprintf(g.streams.Out, "%s: nothing to reopen\n", ix.Path(id))
		return nil
	}
	for _, r := range reopened {
		fmt.Fprintf(g.streams.Out, "reopened %s (attempts 0)\n", r)
	}
	return nil
}
