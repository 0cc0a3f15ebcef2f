package cli

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/proc"
)

// newSuperviseCmd is `runner __supervise`, hidden: the supervisor each
// agent run and each guard runs under (see proc.Supervise). The runner
// starts it itself, with the command to run on a pipe; people never do.
// Package proc's init normally answers first, before the engine's
// packages and the command line are initialised; this command is the
// same entry point as seen by cobra.
func newSuperviseCmd() *cobra.Command {
	return &cobra.Command{
		Use:                proc.SuperviseArg,
		Short:              "Run one agent or guard command for the runner (internal)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := proc.Supervise(args); code != 0 {
				return &ExitError{Code: code}
			}
			return nil
		},
	}
}

// superviseChildren makes the agents and guards of this process run
// under the supervisor, started as this binary with the same argv[0],
// and says once in the log how what they start is tracked.
func (g *globals) superviseChildren() {
	t := proc.UseSupervisor(os.Args[0])
	switch {
	case !t.Supervised:
		g.logger.Warn("agents and guards are started directly; what leaves their process group is found by its environment only", "why", t.Note)
	case t.Cgroup == "":
		g.logger.Info("agents and guards run under a supervisor without a cgroup", "why", t.Note)
	default:
		g.logger.Debug("agents and guards run under a supervisor, each in a cgroup of its own", "under", t.Cgroup)
	}
}
