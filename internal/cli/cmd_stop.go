package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
)

func newStopCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "stop",
		Short: "Ask the running runner to finish its current iteration and exit",
		Long: `Ask the runner working in this repository to finish its current iteration and
exit 0; a runner that is waiting (run --watch with nothing to do, or waiting
for an edit to be fixed) exits at once. Works from any terminal: it writes
.runner/state/stop, which the runner watches. Returns at once and says whether
a runner was running.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStop(g)
		},
	}
}

func runStop(g *globals) error {
	p, err := g.paths()
	if err != nil {
		return err
	}
	held, holder, err := state.LockHolder(p)
	if err != nil {
		return fmt.Errorf("stop: read %s: %w", rel(p, p.Lock()), err)
	}
	if !held {
		fsutil.Remove(p.StopRequest())
		fmt.Fprintln(g.streams.Out, "no runner is running in this repository; nothing to stop")
		return nil
	}
	if err := fsutil.MkdirAll(p.StateDir(), 0o755); err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(p.StopRequest(), []byte(fmt.Sprintf("stop requested by pid %d\n", os.Getpid())), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(g.streams.Out, "asked the runner (%s) to stop after %s, or at once if it is waiting\n", inert.Line(holder), underWay(p))
	return nil
}
