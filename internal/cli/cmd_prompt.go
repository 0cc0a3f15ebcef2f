package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/loop"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

func newPromptCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "prompt",
		Short: "Print the prompt the next iteration would send, without running anything",
		Long: `Print the exact prompt pack the next iteration would send to the agent on
stdout, and a table of section sizes and what was dropped or truncated on
stderr. Nothing is written. On a terminal, control characters in the prompt
(from tree.json or the notes the agent wrote) are shown escaped, like \x1b;
redirected to a file or a pipe, the prompt is printed byte for byte.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPrompt(g)
		},
	}
}

func runPrompt(g *globals) error {
	in, err := g.loadInputs()
	if err != nil {
		return err
	}
	p, cfg, t, ix, sel := in.p, in.Config, in.Tree, in.Index, in.Selection
	rs, err := state.LoadRunState(p.RunState())
	if err != nil {
		return err
	}
	if sel.State != tree.Selectable {
		return fmt.Errorf("prompt: no task is selectable (see `runner next`)")
	}
	prep, err := loop.Prepare(p, cfg, t, ix, sel.Node, rs)
	if err != nil {
		return err
	}
	text := prep.Pack.Text
	if isTerminal(g.streams.Out) {
		text = inert.Text(text) // the exact bytes go to a pipe or a file
	}
	fmt.Fprint(g.streams.Out, text)
	w := g.streams.Err
	fmt.Fprintf(w, "\n%-16s %-22s %8s %8s  %s\n", "section", "source", "bytes", "tokens", "state")
	for _, s := range prep.Pack.Sections {
		fmt.Fprintf(w, "%-16s %-22s %8d %8d  %s\n", inert.Line(s.Name), inert.Line(s.Source), s.Bytes, s.Tokens, inert.Line(s.State))
	}
	fmt.Fprintf(w, "%-16s %-22s %8d %8s  budget %d\n", "total", "", len(prep.Pack.Text), "", prep.Pack.Budget)
	for rule, n := range prep.Pack.Redactions {
		fmt.Fprintf(w, "redacted %d × %s\n", n, inert.Line(rule))
	}
	return nil
}
