package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/loop"
)

func newAbandonCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "abandon ITERATION",
		Short: "Set aside an iteration a stopped runner left unfinished, spending no attempt",
		Long: `Set aside iteration ITERATION, which a runner that stopped (killed, or failed
while recording it) left unfinished, without running anything of it again. The
next "runner run" would otherwise resolve it first; use this when that fails
every time, or when you no longer want its work judged.

Its agent and guards, if any are still running, are stopped. Its meta.json gets
phase "aborted" with a note saying it was abandoned, the journal an "aborted"
record, and the run state forgets it. No attempt is spent and tree.json is not
touched: "runner reset" and "runner skip" work on its task afterwards. Its work
stays where the agent left it; with git checkpoints the next run keeps what no
attempt claims under refs/runner/kept/ before a task starts on the checkpoint.

It takes the runner's lock: stop a running runner first ("runner stop").

EXIT STATUS
  0  set aside
  1  no such unfinished iteration, a runner running, or an error reading or
     writing the files`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeIterations(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 1 {
				return fmt.Errorf("abandon: %q is not an iteration number (runner status lists the unfinished ones)", args[0])
			}
			return runAbandon(g, n)
		},
	}
}

func runAbandon(g *globals, n int) error {
	p, err := g.paths()
	if err != nil {
		return err
	}
	meta, err := loop.Abandon(loop.Options{Paths: p, Log: g.logger.WithPrefix("abandon")}, n)
	if err != nil {
		return err
	}
	task := meta.NodePath
	if task == "" {
		task = meta.Node
	}
	fmt.Fprintf(g.streams.Out, "abandoned iteration %d on %s: set aside, no attempt spent (runner show %d)\n", n, inert.Line(task), n)
	return nil
}
