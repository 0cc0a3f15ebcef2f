// Package cli is runner's command line: one file per command, each with
// an options struct and a run function; Main maps errors to exit codes in
// one place.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/charmbracelet/log"
	"github.com/muesli/termenv"
	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/status"
)

// Exit codes of the runner.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitStuck       = 3
	ExitMaxIter     = 4
	ExitInterrupted = 130
)

// ExitError carries an exit code through cobra's error return.
type ExitError struct {
	Code int
	Err  error // nil: nothing more to print
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Streams are the command's standard streams; tests replace them.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
}

// globals are the flags every command has.
type globals struct {
	Dir       string
	LogLevel  string
	LogFormat string
	streams   Streams
	logger    *log.Logger
	// confined are the .runner/ folders this command confined
	// (fsutil.Confine), released when it ends.
	confined []string
}

// Main runs the command line with the process's arguments and streams and
// returns the exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Execute(ctx, os.Args[1:], Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
}

// Execute runs the command line with the given arguments and streams.
func Execute(ctx context.Context, args []string, s Streams) int {
	// With --json, what the command printed is counted (jsonError); the
	// stream is left as it is otherwise, for the commands that look for a
	// terminal.
	var out *countingWriter
	if jsonArg(args) {
		out = &countingWriter{w: s.Out}
		s.Out = out
	}
	g := &globals{streams: s}
	root := newRootCmd(g)
	root.SetArgs(args)
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	cmd, err := root.ExecuteContextC(ctx)
	for _, dir := range g.confined {
		fsutil.Release(dir)
	}
	if err == nil {
		return ExitOK
	}
	code, msg := ExitFailure, err.Error()
	var ee *ExitError
	if errors.As(err, &ee) {
		code, msg = ee.Code, ""
		if ee.Err != nil {
			msg = ee.Err.Error()
		}
	}
	// Errors quote what they were given: a title, a file's content, what
	// the agent printed.
	if msg != "" {
		fmt.Fprintf(s.Err, "runner: %s\n", inert.Text(msg))
	}
	if out != nil && out.n == 0 && wantsJSON(cmd) {
		printJSONError(s.Out, code, msg)
	}
	return code
}

func newRootCmd(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "runner",
		Short: "Drive a coding agent unattended through a task tree",
		Long: `runner drives a coding agent (Codex CLI, Claude Code, or any command) through
the task tree in .runner/tree.json: each iteration it picks the next task, writes
small context files, builds a size-bounded prompt, runs the agent with a fresh
session, verifies the work with guard commands and records the outcome under
.runner/. It resumes where it stopped after a crash.

Start with "runner demo" to watch it work, or "runner init" in your repository.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       version(),
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return g.setupLogger()
		},
	}
	root.SetVersionTemplate("runner {{.Version}}\n")
	root.PersistentFlags().StringVar(&g.Dir, "dir", "", "repository root (default: the nearest parent directory holding .runner/)")
	root.PersistentFlags().StringVar(&g.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	root.PersistentFlags().StringVar(&g.LogFormat, "log-format", "text", "log format: text or json")
	root.AddCommand(
		newInitCmd(g),
		newPlanCmd(g),
		newRunCmd(g),
		newStatusCmd(g),
		newReportCmd(g),
		newNextCmd(g),
		newPromptCmd(g),
		newValidateCmd(g),
		newShowCmd(g),
		newResetCmd(g),
		newAnswerCmd(g),
		newSkipCmd(g),
		newAbandonCmd(g),
		newFinishCmd(g),
		newStopCmd(g),
		newPauseCmd(g),
		newResumeCmd(g),
		newServeCmd(g),
		newDemoCmd(g),
		newDemoAgentCmd(g),
		newDoctorCmd(g),
		newWorkerCmd(g),
		newSuperviseCmd(),
		newConfineCmd(),
	)
	withBashFallback(root)
	return root
}

func (g *globals) setupLogger() error {
	lvl, err := log.ParseLevel(g.LogLevel)
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("--log-level %q: want debug, info, warn or error", g.LogLevel)}
	}
	// The logger gets a writer that does not look like a terminal: given
	// the terminal itself, its renderer asks the terminal for its colours
	// and waits seconds for an answer some terminals never send. Colour is
	// then switched on explicitly when stderr is a terminal.
	l := log.NewWithOptions(plainWriter{g.streams.Err}, log.Options{Level: lvl, ReportTimestamp: true, TimeFormat: "15:04:05"})
	if isTerminal(g.streams.Err) && os.Getenv("NO_COLOR") == "" {
		l.SetColorProfile(termenv.ANSI256)
	}
	switch g.LogFormat {
	case "text":
		l.SetFormatter(log.TextFormatter)
	case "json":
		l.SetFormatter(log.JSONFormatter)
	default:
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("--log-format %q: want text or json", g.LogFormat)}
	}
	g.logger = l
	return nil
}

// paths resolves the repository: --dir, or the nearest parent of the
// working directory that holds .runner/. Its .runner/ is confined for the
// rest of the command: no symbolic link under it is followed, and a
// .runner/ that is itself a link is refused (fsutil.Confine).
func (g *globals) paths() (state.Paths, error) {
	p, err := g.findPaths()
	if err != nil {
		return p, err
	}
	if err := fsutil.Confine(p.Dir); err != nil {
		return p, err
	}
	g.confined = append(g.confined, p.Dir)
	return p, nil
}

func (g *globals) findPaths() (state.Paths, error) {
	if g.Dir != "" {
		abs, err := filepath.Abs(g.Dir)
		if err != nil {
			return state.Paths{}, err
		}
		p := state.NewPaths(abs)
		if _, err := os.Stat(p.Dir); err != nil {
			return p, fmt.Errorf("no %s in %s; run `runner init` there first", state.DirName, abs)
		}
		return p, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return state.Paths{}, err
	}
	for dir := wd; ; {
		if st, err := os.Stat(filepath.Join(dir, state.DirName)); err == nil && st.IsDir() {
			return state.NewPaths(dir), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return state.Paths{}, fmt.Errorf("no %s directory in %s or any parent; run `runner init` in your repository first", state.DirName, wd)
		}
		dir = parent
	}
}

// rel shortens an absolute path under the repository for display, with
// control characters escaped.
func rel(p state.Paths, path string) string {
	r := p.Rel(path)
	if strings.HasPrefix(r, "..") {
		return inert.Line(path)
	}
	return inert.Line(r)
}

// plural formats a count with its noun: "1 task", "3 tasks".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// plainWriter hides the file behind a writer, so that libraries do not
// probe it as a terminal.
type plainWriter struct{ w io.Writer }

func (p plainWriter) Write(b []byte) (int, error) { return p.w.Write(b) }

// inputs are a repository's paths and its config and tree, loaded,
// indexed and with the next task selected, for the commands that read
// them.
type inputs struct {
	p state.Paths
	*status.Tasks
}

// loadInputs resolves the repository and loads its config and tree, and
// selects the next task.
func (g *globals) loadInputs() (*inputs, error) {
	p, err := g.paths()
	if err != nil {
		return nil, err
	}
	tasks, err := status.LoadTasks(p)
	if err != nil {
		return nil, err
	}
	return &inputs{p: p, Tasks: tasks}, nil
}
