package cli

import (
	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/sandbox"
)

// newConfineCmd is `runner __confine <room json> -- argv...`, hidden: it
// restricts itself with Landlock to the room and executes argv in its
// place (see sandbox.Confine); package proc starts agents and guards
// through it when their Spec.Confine is set. Package sandbox's init
// normally answers first, before the command line is parsed (so that any
// binary linking it, test binaries included, plays it); this command is
// the same entry point as seen by cobra.
func newConfineCmd() *cobra.Command {
	return &cobra.Command{
		Use:                sandbox.ConfineArg + " <room json> -- program [argument...]",
		Short:              "Run a command confined to a room with Landlock (internal)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Only returns on failure, having said why.
			return &ExitError{Code: sandbox.Confine(args)}
		},
	}
}
