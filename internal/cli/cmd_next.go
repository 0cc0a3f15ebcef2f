package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/tree"
)

func newNextCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "next",
		Short: "Show which task the next iteration would work on, and why earlier ones are skipped",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runNext(g)
		},
	}
}

// maxSkipLines bounds how many skipped tasks `runner next` lists.
const maxSkipLines = 50

func runNext(g *globals) error {
	in, err := g.loadInputs()
	if err != nil {
		return err
	}
	cfg, sel := in.Config, in.Selection
	out := g.streams.Out
	switch sel.State {
	case tree.Complete:
		fmt.Fprintf(out, "nothing: the tree is complete (%d of %d tasks done)\n", sel.DoneLeaves, sel.TotalLeaves)
	case tree.Stuck:
		fmt.Fprintf(out, "nothing selectable: the tree is stuck (%d of %d tasks done)\n", sel.DoneLeaves, sel.TotalLeaves)
	case tree.Busy:
		fmt.Fprintf(out, "nothing to start now: every task that can run is in flight, or waits for one that is (`runner status` shows them)\n")
	default:
		n := sel.Node
		fmt.Fprintf(out, "next: %s — %s\n", inert.Line(sel.Path), inert.Line(n.Title))
		fmt.Fprintf(out, "  attempt %d of %d\n", n.Attempts+1, n.AttemptLimit(cfg.Loop.MaxAttempts))
		if len(sel.Blocked) > 0 && cfg.Loop.OnBlocked == "stop" {
			fmt.Fprintf(out, "  but `runner run` stops first: %d blocked task(s) and loop.on_blocked = \"stop\" (see `runner status`)\n", len(sel.Blocked))
		}
	}
	if len(sel.Skipped) > 0 {
		fmt.Fprintf(out, "skipped (%d done tasks not listed):\n", sel.DoneLeaves)
		for i, s := range sel.Skipped {
			if i == maxSkipLines {
				fmt.Fprintf(out, "  … and %d more\n", len(sel.Skipped)-maxSkipLines)
				break
			}
			fmt.Fprintf(out, "  %s: %s\n", inert.Line(s.Path), inert.Line(s.Reason))
		}
	}
	return nil
}
