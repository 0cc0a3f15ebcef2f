package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
)

func newResumeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "resume",
		Short: "Let a paused runner go on",
		Long: `End a "runner pause": the paused runner starts its next iteration at once, and
a "runner run" started later does not hold. Removes .runner/state/pause.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runResume(g)
		},
	}
}

func runResume(g *globals) error {
	p, err := g.paths()
	if err != nil {
		return err
	}
	held, holder, err := state.LockHolder(p)
	if err != nil {
		return fmt.Errorf("resume: read %s: %w", rel(p, p.Lock()), err)
	}
	err = os.Remove(p.PauseRequest())
	switch {
	case errors.Is(err, os.ErrNotExist):
		fmt.Fprintln(g.streams.Out, "not paused; nothing to resume")
		return nil
	case err != nil:
		return fmt.Errorf("resume: %w", err)
	case held:
		fmt.Fprintf(g.streams.Out, "resumed: the runner (%s) goes on\n", inert.Line(holder))
	default:
		fmt.Fprintln(g.streams.Out, "resumed: no runner is running; the next `runner run` will not hold")
	}
	return nil
}
