package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/tree"
)

func newNextCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "next",
		Short: "Show which task the next iteration would work on, and why earlier ones are skipped",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				return runNextJSON(g)
			}
			return runNext(g)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the selection as JSON (state, the task, the skipped ones)")
	return cmd
}

// nextJSON is what `runner next --json` prints.
type nextJSON struct {
	// State is "selectable", "complete", "stuck", or "busy" (every task
	// that can run is in flight).
	State       string     `json:"state"`
	Node        string     `json:"node,omitempty"`
	Path        string     `json:"path,omitempty"`
	Title       string     `json:"title,omitempty"`
	Attempt     int        `json:"attempt,omitempty"`
	MaxAttempts int        `json:"max_attempts,omitempty"`
	Done        int        `json:"done"`
	Total       int        `json:"total"`
	Skipped     []skipJSON `json:"skipped"`
}

type skipJSON struct {
	Node   string `json:"node"`
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

func runNextJSON(g *globals) error {
	in, err := g.loadInputs()
	if err != nil {
		return err
	}
	sel := in.Selection
	out := nextJSON{State: sel.State.String(), Done: sel.DoneLeaves, Total: sel.TotalLeaves, Skipped: []skipJSON{}}
	if sel.State == tree.Selectable && sel.Node != nil {
		out.Node, out.Path, out.Title = sel.Node.ID, sel.Path, sel.Node.Title
		out.Attempt, out.MaxAttempts = sel.Node.Attempts+1, sel.Node.AttemptLimit(in.Config.Loop.MaxAttempts)
	}
	for _, s := range sel.Skipped {
		out.Skipped = append(out.Skipped, skipJSON{Node: s.ID, Path: s.Path, Reason: s.Reason})
	}
	enc := json.NewEncoder(g.streams.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
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
