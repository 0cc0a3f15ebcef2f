package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/live"
	"github.com/runner-cli/runner/internal/loop"
)

type runOptions struct {
	MaxIterations int
	Once          bool
	Watch         bool
	NoPreflight   bool
	Parallel      int
	Check         bool
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

.runner/tree.json and .runner/config.toml are re-read before every iteration,
so they can be edited while the runner works: add tasks, fix a goal, raise
max_attempts on a blocked task (it reopens). An edit made during an iteration is
kept; the runner changes only the status fields of the task it worked on. An
edit that does not validate is reported on stderr, left as it is, and waited
out until it is fixed. "runner stop" (from another terminal) ends the run after
the current iteration; "runner pause" holds it after the current iteration until
"runner resume" (a pause left standing holds the next run before it starts).

Before the first agent, the guards run once on the starting checkpoint (the
preflight): a guard that fails there would fail every task, so the run stops
with exit 1, naming it, before any agent is paid. A passing preflight is not
run again on the same commit with the same guards. --no-preflight or
verify.preflight = false skips it.

An agent that cannot work at all (its key refused, not logged in, a model it
does not have, its own setup broken) spends no attempt: the run stops at its
first answer with exit 1, quoting it and saying what to do (with [[fallback]]
executors, the next one takes over). --check asks every configured agent a
trivial question before anything runs, as "runner doctor" does, and starts only
when each answers.

With --watch the runner does not exit when the tree is complete or stuck: it
says so on stderr and waits for tree.json or config.toml to change, then goes
on. It ends on "runner stop" (exit 0) or Ctrl-C (exit 130).

EXIT STATUS
  0    the tree is complete, or a stop was requested (--once: one iteration ran)
  1    error: bad config or tree at start, lock held by another runner, I/O
       failure, an agent that cannot work (program missing, not logged in, key
       refused, unknown model; no attempt spent), an agent not answering
       --check, a guard failing in the preflight,
       loop.max_consecutive_errors reached, a rate limit outlasting
       loop.max_wait (a bad edit made once the run is going is waited out
       instead)
  3    stuck: blocked tasks, nothing selectable
  4    max_iterations, max_cost_usd or max_tokens reached with work left
  130  interrupted`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd.Context(), g, opts)
		},
	}
	cmd.Flags().IntVar(&opts.MaxIterations, "max-iterations", 0, "iterations to run in this invocation (default: loop.max_iterations)")
	cmd.Flags().BoolVar(&opts.Once, "once", false, "run one iteration and exit")
	cmd.Flags().BoolVar(&opts.NoPreflight, "no-preflight", false, "do not run the guards on the starting checkpoint before the first agent (verify.preflight)")
	cmd.Flags().IntVar(&opts.Parallel, "parallel", 0, "tasks worked on at once, each in a worktree of its own (default: loop.parallel; needs git checkpoints)")
	cmd.Flags().BoolVar(&opts.Check, "check", false, "first run each configured agent once with a trivial prompt, and start only when every one answers")
	cmd.Flags().BoolVar(&opts.Watch, "watch", false, "when the tree is complete or stuck, wait for .runner/tree.json or config.toml to change instead of exiting")
	return cmd
}

func runRun(ctx context.Context, g *globals, opts *runOptions) error {
	if opts.Parallel < 0 || opts.Parallel > config.MaxParallel {
		return fmt.Errorf("run: --parallel must be from 1 to %d, got %d", config.MaxParallel, opts.Parallel)
	}
	if opts.Once && opts.Watch {
		return errors.New("run: --once and --watch cannot be used together (--once exits after one iteration; --watch never exits on its own)")
	}
	p, err := g.paths()
	if err != nil {
		return err
	}
	g.superviseChildren() // the check's agents run as the run's do
	if opts.Check {
		if err := checkAgents(ctx, g, p); err != nil {
			return err
		}
	}
	tuneGCForRun()
	// On a terminal, the iterations under way are shown live below what
	// the run prints (package live); piped, plain lines only.
	var board *live.Board
	if f, ok := g.streams.Out.(*os.File); ok {
		board = live.ForTerminal(f)
	}
	stop := make(chan struct{})
	drawn := make(chan struct{})
	go func() { board.Run(stop); close(drawn) }()
	logger := g.logger.WithPrefix("run")
	if board != nil {
		logger.SetOutput(board.Writer(plainWriter{g.streams.Err}))
	}
	res, err := loop.Run(ctx, loop.Options{
		Paths:         p,
		MaxIterations: opts.MaxIterations,
		Once:          opts.Once,
		Watch:         opts.Watch,
		NoPreflight:   opts.NoPreflight,
		Parallel:      opts.Parallel,
		Progress:      board.Writer(g.streams.Out),
		Notices:       board.Writer(g.streams.Err),
		Log:           logger,
		Live:          liveBoard(board),
	})
	close(stop)
	<-drawn
	if err != nil {
		if ctx.Err() != nil {
			return &ExitError{Code: ExitInterrupted, Err: err}
		}
		return err
	}
	return exitForResult(g, res)
}

func exitForResult(g *globals, res *loop.Result) error {
	fmt.Fprintf(g.streams.Err, "runner: %s\n", inert.Text(res.Message))
	if code := exitForResultCode(res); code != ExitOK {
		return &ExitError{Code: code}
	}
	return nil
}

// liveBoard is board as the loop's Live, nil when there is none.
func liveBoard(board *live.Board) loop.Live {
	if board == nil {
		return nil
	}
	return board
}
