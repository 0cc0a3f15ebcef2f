package cli

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/prompt"
	"github.com/runner-cli/runner/internal/review"
	"github.com/runner-cli/runner/internal/spend"
	"github.com/runner-cli/runner/internal/tree"
)

func newValidateCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check .runner/config.toml and .runner/tree.json and report every problem",
		Long: `Check the config and the tree and report every problem at once, each naming
the file, the node path or config key, and for syntax errors the line and column.

EXIT STATUS
  0  both files are valid (warnings may still be printed)
  1  at least one problem`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runValidate(g, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"ok", "tasks", "problems": [{"file", "line", "column", "node", "key", "message"}], "warnings", "done", "checks"} as JSON on stdout`)
	return cmd
}

func runValidate(g *globals, asJSON bool) error {
	p, err := g.paths()
	if err != nil {
		return err
	}
	out, errw := g.streams.Out, g.streams.Err
	res := validateJSON{Problems: []validateProblem{}, Warnings: []string{}}
	// warn says a warning: on stderr, or with --json in "warnings".
	warn := func(format string, args ...any) {
		if asJSON {
			res.Warnings = append(res.Warnings, fmt.Sprintf(format, args...))
			return
		}
		fmt.Fprintf(errw, "warning: "+format+"\n", args...)
	}
	defer func() {
		if !asJSON {
			return
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		enc.Encode(res)
	}()
	var problems []error
	cfg, err := config.Load(p.Config())
	if err != nil {
		problems = append(problems, err)
	}
	t, err := tree.Load(p.Tree())
	if err != nil {
		problems = append(problems, err)
	}
	if cfg != nil {
		if need := prompt.MinBudget(cfg.Verify.Protect); int(cfg.Prompt.Budget) < need {
			problems = append(problems, &config.Error{Problems: []config.Problem{{File: rel(p, p.Config()), Key: "prompt.budget",
				Msg: fmt.Sprintf("%d is smaller than the fixed prompt text (%d bytes); raise it (default 40KiB)", cfg.Prompt.Budget, need)}}})
		}
		if len(cfg.Guards) == 0 && (t == nil || !anyChecks(t)) {
			warn("%s has no [[guard]] and no task has checks: an agent's \"done\" will be trusted without checks", rel(p, p.Config()))
		}
		if cfg.Review.Enabled {
			if int(cfg.Prompt.Budget) < review.MinBudget() {
				problems = append(problems, &config.Error{Problems: []config.Problem{{File: rel(p, p.Config()), Key: "prompt.budget",
					Msg: fmt.Sprintf("%d is smaller than the fixed text of the review prompt (%d bytes); raise it (default 40KiB)", cfg.Prompt.Budget, review.MinBudget())}}})
			}
			if cfg.Review.Preset != config.PresetCommand && cfg.Review.Preset == cfg.Executor.Preset && cfg.Review.Bin == cfg.Executor.Bin {
				warn("%s: [review] runs %s, as [executor] does: a second opinion is worth most from another model (another preset, or a model flag in review.args)",
					rel(p, p.Config()), cfg.Review.Preset)
			}
		}
	}
	if cfg != nil && t != nil {
		// A node's ladder names executors of config.toml (SPEC §24).
		if err := spend.UnknownExecutors(cfg, t, rel(p, p.Tree())); err != nil {
			problems = append(problems, err)
		}
	}
	if cfg != nil {
		warnMissingPrograms(warn, cfg, p.Root)
	}
	if len(problems) > 0 {
		for _, e := range problems {
			if asJSON {
				res.Problems = append(res.Problems, problemsOf(e)...)
				continue
			}
			fmt.Fprintln(errw, inert.Text(e.Error()))
		}
		res.Tasks = countTasks(p.Tree())
		return &ExitError{Code: ExitFailure, Err: errors.New("validation failed")}
	}
	warnExample(warn, p, t)
	ix := tree.NewIndex(t)
	sel := tree.Select(t, ix, cfg.Loop.MaxAttempts)
	checks := 0
	t.Walk(func(n *tree.Node) { checks += len(n.Checks) })
	withChecks := ""
	if checks > 0 {
		withChecks = ", " + plural(checks, "check")
	}
	res.OK, res.Valid, res.Tasks, res.Done, res.Checks = true, true, sel.TotalLeaves, sel.DoneLeaves, checks
	if !asJSON {
		fmt.Fprintf(out, "ok: %s and %s are valid (%s, %d done%s)\n", rel(p, p.Config()), rel(p, p.Tree()), plural(sel.TotalLeaves, "task"), sel.DoneLeaves, withChecks)
	}
	return nil
}

// anyChecks reports whether a node of t carries checks.
func anyChecks(t *tree.Tree) bool {
	found := false
	t.Walk(func(n *tree.Node) { found = found || len(n.Checks) > 0 })
	return found
}

// warnMissingPrograms warns of each configured executor (the agent, the
// fallbacks, the reviewer) whose program cannot be found: the run would
// stop on it. With [engine] the agents run on the workers, which need
// them, and only the reviewer on this machine.
func warnMissingPrograms(warn func(format string, args ...any), cfg *config.Config, root string) {
	check := func(what string, e config.Executor) {
		if err := executor.CheckProgram(executor.OptionsFrom(e, nil), root); err != nil {
			warn("%s: %s", what, inert.Line(err.Error()))
		}
	}
	if !cfg.Engine.On() {
		check("[executor] "+cfg.Executor.Label(), cfg.Executor)
		for _, f := range cfg.Fallbacks {
			check("[[fallback]] "+f.Label(), f)
		}
	}
	if cfg.Review.Enabled {
		check("[review] "+cfg.Review.Label(), cfg.Review.Executor)
	}
}
