package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/doctor"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/proc"
)

func newDoctorCmd(g *globals) *cobra.Command {
	var asJSON, noAgents bool
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

Last, each configured agent ([executor], each [[fallback]], [review]; with
[engine] the reviewer only) is run once with a trivial prompt, in an empty
temporary folder, within its executor.timeout (at most 2 minutes), and the
check says whether it answered; when it did not, what it said (its key
refused, not logged in, an unknown model, no answer in time) and what to do.
--no-agents leaves them out.

Nothing in the repository is changed. The machine is described also outside
a repository.

EXIT STATUS
  0  the machine is described (whatever it lacks, whether the agents answer)
  1  there is a .runner/ whose config.toml cannot be read (it says why)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDoctor(cmd.Context(), g, asJSON, noAgents)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	cmd.Flags().BoolVar(&noAgents, "no-agents", false, "do not run the configured agents to see whether they answer")
	return cmd
}

func runDoctor(ctx context.Context, g *globals, asJSON, noAgents bool) error {
	in := doctorInput(g)
	r := doctor.Gather(ctx, doctor.DefaultProbes(), in)
	if in.Config != nil && !noAgents {
		// The agents run as a run starts them: under the supervisor, in
		// their room (which the supervisor's binary builds).
		proc.UseSupervisor(os.Args[0])
		r.Answers = doctor.AskExecutors(ctx, in.Config)
	}
	write := doctor.WriteText
	if asJSON {
		write = doctor.WriteJSON
	}
	if err := write(g.streams.Out, r); err != nil {
		return err
	}
	if !asJSON {
		if err := doctor.WriteAnswers(g.streams.Out, r.Answers); err != nil {
			return err
		}
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
