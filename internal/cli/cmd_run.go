package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/loop"
)

type runOptions struct {
	MaxIterations int
	Once          bool
}

func newRunCmd(g *globals) *cobra.Command {
	opts := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the loop until the tree is complete, stuck, or the iteration limit is reached",
		Long: `Run iterations until every task is done, a task is blocked (or nothing is
selectable), or the iteration limit is reached. Each iteration prints one line.
Interrupting (Ctrl-C) stops the agent, records the iteration as interrupted and
exits; the next run retries that task.

EXIT STATUS
  0    the tree is complete, or a stop was requested (--once: one iteration ran)
  1    error: bad config or tree, lock held by another runner, I/O failure
  3    stuck: blocked tasks, nothing selectable
  4    max_iterations reached with work left
  130  interrupted`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd.Context(), g, opts)
		},
	}
	cmd.Flags().IntVar(&opts.MaxIterations, "max-iterations", 0, "iterations to run in this invocation (default: loop.max_iterations)")
	cmd.Flags().BoolVar(&opts.Once, "once", false, "run one iteration and exit")
	return cmd
}

func runRun(ctx context.Context, g *globals, opts *runOptions) error {
	p, err := g.paths()
	if err != nil {
		return err
	}
	res, err := loop.Run(ctx, loop.Options{
		Paths:         p,
		MaxIterations: opts.MaxIterations,
		Once:          opts.Once,
		Progress:      g.streams.Out,
		Log:           g.logger.WithPrefix("run"),
	})
	if err != nil {
		if ctx.Err() != nil {
			return &ExitError{Code: ExitInterrupted, Err: err}
		}
		return err
	}
	return exitForResult(g, res)
}

func exitForResult(g *globals, res *loop.Result) error {
	fmt.Fprintf(g.streams.Err, "runner: %s\n", res.Message)
	if code := exitForResultCode(res); code != ExitOK {
		return &ExitError{Code: code}
	}
	return nil
}
