package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/scaffold"
)

type initOptions struct {
	Preset string
	Force  bool
}

func newInitCmd(g *globals) *cobra.Command {
	opts := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create .runner/ with a commented config, an example tree and a .gitignore",
		Long: `Create .runner/ in the repository (--dir, default: the current directory) from
the example built into runner: a commented config.toml, a small example
tree.json and a .gitignore. Existing files are never overwritten unless --force.

The guard in config.toml and the example tree fit the kind of project found at
the repository's root, the first of: Go (go.mod: go test -json ./... with a
go-json report), Python (pyproject.toml, setup.py, setup.cfg, requirements.txt
or tests/test_*.py: pytest with a JUnit report when the project mentions
pytest, else python3 -m unittest discover -v with a unittest report), Node
(package.json with a test script: npm test, or node --test with a TAP report),
Rust (Cargo.toml: cargo test) and Make (a Makefile with a test target: make
test). With a report, a suite that already fails when a run starts is that
run's baseline; without one (npm test, cargo test, make test) it stops the run
before any agent works, which init says. With none of these kinds, a neutral
example without a guard, and a note saying which guard to write.

.runner/.gitignore keeps context/, runs/, state/, lock and the tree backups of
"runner plan" out of git; commit config.toml and tree.json.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInit(g, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Preset, "preset", "", "agent preset for config.toml: codex, claude or command")
	cmd.RegisterFlagCompletionFunc("preset", completePresets)
	cmd.Flags().BoolVar(&opts.Force, "force", false, "overwrite existing files")
	return cmd
}

func runInit(g *globals, opts *initOptions) error {
	root := g.Dir
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		root = wd
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	project := scaffold.Detect(root)
	res, err := scaffold.Init(scaffold.Options{Root: root, Preset: opts.Preset, Force: opts.Force, Project: &project})
	if err != nil {
		return err
	}
	out := g.streams.Out
	fmt.Fprintf(out, "recognised  %s\n", project.Recognised())
	fmt.Fprintf(out, "wrote       %s\n", project.GuardLine())
	for _, f := range res.Created {
		fmt.Fprintf(out, "created     %s\n", f)
	}
	for _, f := range res.Overwritten {
		fmt.Fprintf(out, "overwritten %s\n", f)
	}
	for _, f := range res.Kept {
		fmt.Fprintf(out, "kept        %s\n", f)
	}
	for _, n := range project.Notes {
		fmt.Fprintf(out, "note: %s\n", n)
	}
	fmt.Fprintln(out, `
where:      the agent will work in a worktree beside this checkout, on the run branch
            runner/<root id>, confined there where the kernel allows ("runner doctor");
            this checkout is not touched (git.worktree and [sandbox] in config.toml)

next: edit .runner/tree.json (your tasks) and .runner/config.toml (agent, guards),
then "runner validate", "runner prompt" to see the first prompt, and "runner run".`)
	return nil
}
