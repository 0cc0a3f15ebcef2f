package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
)

func newPauseCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "pause",
		Short: "Hold the runner after its current iteration until `runner resume`",
		Long: `Ask the runner working in this repository to finish its current iteration,
then hold: no iteration starts until "runner resume". "runner stop" and Ctrl-C
still end a paused run. "runner status" and the dashboard say paused.

Works from any terminal: it writes .runner/state/pause, which the runner
watches. The pause outlives the runner: asked while no runner is running, or
left when a paused run is stopped, it holds the next "runner run" before its
first iteration, until "runner resume".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPause(g)
		},
	}
}

func runPause(g *globals) error {
	p, err := g.paths()
	if err != nil {
		return err
	}
	held, holder, err := state.LockHolder(p)
	if err != nil {
		return fmt.Errorf("pause: read %s: %w", rel(p, p.Lock()), err)
	}
	if _, err := os.Lstat(p.PauseRequest()); err != nil {
		if err := fsutil.MkdirAll(p.StateDir(), 0o755); err != nil {
			return err
		}
		note := fmt.Sprintf("paused by pid %d at %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
		if err := fsutil.WriteFileAtomic(p.PauseRequest(), []byte(note), 0o644); err != nil {
			return fmt.Errorf("pause: %w", err)
		}
	} else {
		fmt.Fprint(g.streams.Out, "already paused; ")
	}
	if held {
		fmt.Fprintf(g.streams.Out, "the runner (%s) finishes %s, then holds until `runner resume`\n", inert.Line(holder), underWay(p))
	} else {
		fmt.Fprintln(g.streams.Out, "no runner is running; the next `runner run` holds before its first iteration until `runner resume`")
	}
	return nil
}

// underWay names the iterations under way, for a message about what a
// runner finishes first: every slot's.
func underWay(p state.Paths) string {
	rs, err := state.LoadRunState(p.RunState())
	if err != nil {
		return "the iterations under way"
	}
	all := state.CurrentInFlights(p, rs)
	switch len(all) {
	case 0:
		return "what it is doing"
	case 1:
		return fmt.Sprintf("iteration %d (%s)", all[0].Iteration, inert.Line(all[0].Node))
	}
	names := make([]string, len(all))
	for i, in := range all {
		names[i] = fmt.Sprintf("%d (%s)", in.Iteration, inert.Line(in.Node))
	}
	return "iterations " + strings.Join(names, ", ")
}
