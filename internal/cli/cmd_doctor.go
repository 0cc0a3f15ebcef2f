package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/doctor"
	"github.com/runner-cli/runner/internal/fsutil"
)

func newDoctorCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Say what this machine gives the runner and what the configuration would do with it",
		Long: `Say what this machine gives the runner: the Landlock ABI that confines the
agent, the guards and the reviewer; whether each command can get a cgroup v2 of
its own; the git version; the agent CLIs found (codex, claude and the programs
.runner/config.toml names, each asked its --version, for at most 5 seconds).
Then, when there is a .runner/, what its configuration would do with them:
whether the agents run confined (sandbox.mode), where they work (git.worktree),
loop.parallel against the CPUs, and what would keep a run from starting. With
[engine], it asks the Temporal service which workers polled its task queue
lately (each probe within 5 seconds) and whether git reaches engine.remote.

Nothing is changed. The machine is described also outside a repository.

EXIT STATUS
  0  the machine is described (whatever it lacks)
  1  there is a .runner/ whose config.toml cannot be read (it says why)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDoctor(cmd.Context(), g, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

func runDoctor(ctx context.Context, g *globals, asJSON bool) error {
	in := doctorInput(g)
	r := doctor.Gather(ctx, doctor.DefaultProbes(), in)
	write := doctor.WriteText
	if asJSON {
		write = doctor.WriteJSON
	}
	if err := write(g.streams.Out, r); err != nil {
		return err
	}
	if r.ConfigUnreadable() {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("doctor: %s cannot be read", in.File)}
	}
	return nil
}

// doctorInput finds the repository as the other commands do (--dir, or
// the nearest .runner/ above) and loads its config; without a .runner/
// only the machine is described.
func doctorInput(g *globals) doctor.Input {
	if _, err := g.findPaths(); err != nil {
		return doctor.Input{NoDir: err.Error()}
	}
	p, err := g.paths()
	in := doctor.Input{Root: p.Root, File: fsutil.DisplayPath(p.Config()), Err: err}
	if err == nil {
		in.Config, in.Err = config.Load(p.Config())
	}
	return in
}
