package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/demo"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/loop"
)

type demoOptions struct {
	Path string
}

func newDemoCmd(g *globals) *cobra.Command {
	opts := &demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a small task tree to completion in a scratch repository with a scripted agent",
		Long: `Create a scratch git repository with a three-task tree and real guard commands,
and run it to completion with a scripted agent played by this binary. The agent
gets the first task wrong, the guard catches it, and the retry reads
.runner/context/failure.md and fixes it; the second task asks for another
attempt and the retry reads history.md. Needs nothing but this binary (and sh).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDemo(cmd.Context(), g, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Path, "path", "", "where to create the demo repository (default: a new temporary directory)")
	return cmd
}

func runDemo(ctx context.Context, g *globals, opts *demoOptions) error {
	dir := opts.Path
	var err error
	if dir == "" {
		if dir, err = os.MkdirTemp("", "runner-demo-"); err != nil {
			return err
		}
	} else if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("demo: %s is not empty; give --path a new or empty directory", dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	self, err := selfPath()
	if err != nil {
		return fmt.Errorf("demo: find the runner binary: %w", err)
	}
	p, err := demo.Setup(dir, self)
	if err != nil {
		return fmt.Errorf("demo: set up %s: %w", dir, err)
	}
	g.superviseChildren()
	out := g.streams.Out
	fmt.Fprintf(out, "demo repository: %s\n\n", dir)
	res, err := loop.Run(ctx, loop.Options{Paths: p, Progress: out, Log: g.logger.WithPrefix("demo")})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n%s after %d iterations.\n", inert.Text(res.Message), res.Iterations)
	if wt := dir + git.WorktreesSuffix + "/runner-greeter"; dirExists(wt) {
		fmt.Fprintf(out, `
The work is on the run branch runner/greeter, one commit per task, done in
a worktree beside the demo repository (its own checkout is not touched):
  %[1]s                 hello.txt, goodbye.txt: what the agent wrote
  git -C %[2]s log --stat runner/greeter
  %[3]s finish --dir %[2]s     merges it, as you would in the morning
`, wt, dir, invocation(self))
	}
	fmt.Fprintf(out, `
Where to look:
  %[1]s/.runner/tree.json                 the tree, with status and attempts
  %[1]s/.runner/runs/000001/prompt.md     the first prompt sent to the agent
  %[1]s/.runner/runs/000002/prompt.md     the retry's prompt, with the guard failure
  %[1]s/.runner/runs/*/meta.json          what happened in each iteration
  %[1]s/.runner/state/journal.jsonl       every event, in order
  %[2]s status --dir %[1]s
  %[2]s show 2 --dir %[1]s
`, dir, invocation(self))
	if code := exitForResultCode(res); code != 0 {
		return &ExitError{Code: code}
	}
	return nil
}

func newDemoAgentCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:    demo.AgentCommand,
		Short:  "The scripted agent `runner demo` runs (internal)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := demo.Agent(g.streams.In, g.streams.Out); code != 0 {
				return &ExitError{Code: code}
			}
			return nil
		},
	}
}

func exitForResultCode(res *loop.Result) int {
	switch res.Reason {
	case loop.Stuck:
		return ExitStuck
	case loop.MaxIterations:
		return ExitMaxIter
	case loop.Interrupted:
		return ExitInterrupted
	}
	return ExitOK
}

// invocation is how the reader can run this binary again, for the demo's
// closing hints: `runner` when that name on PATH is this binary, `go run
// ./cmd/runner` when this is the temporary build of `go run`, and the
// binary's path otherwise.
func invocation(self string) string {
	if p, err := exec.LookPath("runner"); err == nil {
		if a, err := os.Stat(p); err == nil {
			if b, err := os.Stat(self); err == nil && os.SameFile(a, b) {
				return "runner"
			}
		}
	}
	if isGoRunBuild(self) {
		return "go run ./cmd/runner"
	}
	return self
}

// isGoRunBuild reports whether path is a binary `go run` built: it lies
// in a go-build folder of the temporary directory.
func isGoRunBuild(path string) bool {
	rel, err := filepath.Rel(os.TempDir(), path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return false
	}
	return strings.HasPrefix(rel, "go-build")
}

// selfPath is the program the demo runs as its agent: this binary, as it
// was invoked (so a binary reached through a link keeps its name), falling
// back to the kernel's answer.
func selfPath() (string, error) {
	arg0 := os.Args[0]
	if !strings.ContainsRune(arg0, filepath.Separator) {
		if p, err := exec.LookPath(arg0); err == nil {
			return filepath.Abs(p)
		}
	} else if st, err := os.Stat(arg0); err == nil && !st.IsDir() {
		return filepath.Abs(arg0)
	}
	return os.Executable()
}

func dirExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
