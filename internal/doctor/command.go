package doctor

import (
	"context"
	"errors"
	"fmt"
	"github.com/runner-cli/runner/internal/git"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/runner-cli/runner/internal/config"
)

// toolSpec is a program to look for.
type toolSpec struct {
	name, bin string
	ask       bool // run it with --version
	usedBy    []string
}

// agentsToCheck are codex and claude, then the other programs the
// configuration runs ([executor], each [[fallback]], [review]).
func agentsToCheck(in Input) []toolSpec {
	specs := []toolSpec{{name: "codex", bin: "codex", ask: true}, {name: "claude", bin: "claude", ask: true}}
	cfg := in.Config
	if cfg == nil {
		return specs
	}
	add := func(table string, e config.Executor) {
		bin, ask := e.Bin, true
		switch e.Preset {
		case config.PresetCodex, config.PresetClaude:
			if bin == "" {
				bin = e.Preset
			}
		case config.PresetCommand:
			if len(e.Command) == 0 || e.Command[0] == "" {
				return
			}
			bin, ask = e.Command[0], false
		default:
			return
		}
		for i := range specs {
			if specs[i].bin == bin {
				specs[i].usedBy = append(specs[i].usedBy, table)
				return
			}
		}
		specs = append(specs, toolSpec{name: bin, bin: bin, ask: ask, usedBy: []string{table}})
	}
	add("executor", cfg.Executor)
	for i, f := range cfg.Fallbacks {
		add(fmt.Sprintf("fallback %d", i+1), f)
	}
	if cfg.Review.Enabled {
		add("review", cfg.Review.Executor)
	}
	return specs
}

// checkTool finds a program and asks it its version.
func checkTool(ctx context.Context, p Probes, s toolSpec, root string) Tool {
	t := Tool{Name: s.name, Bin: s.bin, UsedBy: s.usedBy}
	bin := s.bin
	if strings.Contains(bin, "/") && !filepath.IsAbs(bin) && root != "" {
		bin = filepath.Join(root, bin)
	}
	path, err := p.LookPath(bin)
	if err != nil {
		t.Error = "not found"
		if !errors.Is(err, exec.ErrNotFound) && !errors.Is(err, os.ErrNotExist) {
			t.Error = "not usable: " + err.Error()
		}
		return t
	}
	t.Found, t.Path = true, path
	if !s.ask {
		t.Note = "found; not asked its version (preset command)"
		return t
	}
	out, errOut, err := runBounded(ctx, p.Timeout, "", nil, path, "--version")
	if err != nil {
		t.Error = failure(err, out, errOut)
		return t
	}
	if t.Version = firstLine(out); t.Version == "" {
		t.Version = firstLine(errOut)
	}
	if t.Version == "" {
		t.Note = "printed no version"
	}
	return t
}

// checkGit finds git and reads its version.
func checkGit(ctx context.Context, p Probes) Git {
	g := Git{Tool: Tool{Name: "git", Bin: "git"}, Needs: fmt.Sprintf("%d.%d", MinGit[0], MinGit[1])}
	path, err := p.LookPath("git")
	if err != nil {
		g.Error = "not found"
		return g
	}
	g.Found, g.Path = true, path
	out, errOut, err := runBounded(ctx, p.Timeout, "", gitEnv(), path, "--version")
	if err != nil {
		g.Error = failure(err, out, errOut)
		return g
	}
	g.Version = firstLine(out)
	v, ok := git.ParseVersion(g.Version)
	if !ok {
		g.Error = "cannot read its version"
		return g
	}
	g.Major, g.Minor = v[0], v[1]
	g.OK = g.AtLeast(MinGit)
	return g
}

// RepoState says what the runner's checkpoints would find at the root.
type RepoState struct {
	// Kind is RepoOK, RepoNone, RepoUnborn or RepoUnknown.
	Kind string `json:"kind"`
	// Note says why RepoUnknown.
	Note string `json:"note,omitempty"`
}

// Kinds of RepoState.
const (
	RepoOK      = "repository"
	RepoNone    = "not_repository"
	RepoUnborn  = "no_commit"
	RepoUnknown = "unknown"
)

// repoState asks git, read-only, whether root is in a working tree and
// HEAD has a commit. No hook or fsmonitor runs, nor system config is
// read.
func repoState(ctx context.Context, git, root string, timeout time.Duration) RepoState {
	out, errOut, err := runBounded(ctx, timeout, root, gitEnv(), git, "-c", "core.fsmonitor=false", "rev-parse", "--is-inside-work-tree")
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 128 && strings.Contains(string(errOut), "not a git repository"):
		return RepoState{Kind: RepoNone}
	case err != nil:
		return RepoState{Kind: RepoUnknown, Note: "git rev-parse: " + failure(err, out, errOut)}
	case firstLine(out) != "true":
		return RepoState{Kind: RepoNone}
	}
	out, errOut, err = runBounded(ctx, timeout, root, gitEnv(), git, "-c", "core.fsmonitor=false", "rev-parse", "-q", "--verify", "HEAD^{commit}")
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return RepoState{Kind: RepoUnborn}
	case err != nil:
		return RepoState{Kind: RepoUnknown, Note: "git rev-parse HEAD: " + failure(err, out, errOut)}
	}
	return RepoState{Kind: RepoOK}
}

// gitEnv is the runner's environment without what would point git at
// another repository, with git's own messages and no prompt or system
// configuration.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX", "LC_ALL":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat")
}

// outputLimit bounds what is kept of a command's stdout and stderr.
const outputLimit = 64 << 10

// runBounded runs path with args in dir (env nil: the runner's), stdin
// closed (/dev/null), in a process group of its own that is killed when
// timeout passes; what it leaves holding its output is cut off a second
// later. It never takes much longer than timeout.
func runBounded(ctx context.Context, timeout time.Duration, dir string, env []string, path string, args ...string) (stdout, stderr []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errOut capped
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if err != nil && ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("timed out after %s", timeout)
		} else {
			err = fmt.Errorf("interrupted: %w", ctx.Err())
		}
	}
	return out.b, errOut.b, err
}

// failure says why a command failed, with the first line it printed.
func failure(err error, stdout, stderr []byte) string {
	line := firstLine(stderr)
	if line == "" {
		line = firstLine(stdout)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && line != "" {
		return err.Error() + ": " + line
	}
	return err.Error()
}

// firstLine is the first line of b that is not blank, trimmed and cut to
// 200 bytes.
func firstLine(b []byte) string {
	for line := range strings.SplitSeq(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if len(line) > 200 {
				line = strings.ToValidUTF8(line[:200], "") + "…"
			}
			return line
		}
	}
	return ""
}

// capped keeps the first outputLimit bytes written to it.
type capped struct{ b []byte }

func (c *capped) Write(p []byte) (int, error) {
	if room := outputLimit - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
