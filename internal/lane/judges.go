package lane

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/room"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/verify"
)

// The judges of an iteration (SPEC §13) are the guards and the tree loaded
// before its agent started, the runner's state, and the verify.protect
// paths. What the agent changes of them is found when it exits, kept under
// runs/N/tamper/, put back, and fails the attempt: only the runner decides
// that a task is done.

// Judged says what is judged. An agent confined to its worktree (SPEC
// §19) cannot reach the runner's files nor the repository's git
// directory: there config.toml and tree.json are the person's, whose
// edits apply at the next boundary. Unconfined, it reaches them through
// RUNNER_DIR or a path whatever the mode, so they are judged, and with
// them the git configuration and the worktree's .git file that the
// runner's own git would read.
func (l *Local) Judged() verify.Judged {
	cfg, p := l.env.Config(), l.env.Paths
	globs, _ := verify.ParseGlobs(cfg.Verify.Protect) // checked when the config loaded
	var files []verify.File
	confined := l.Confined()
	if !confined && l.tree != nil {
		if common, ok := state.GitCommonDir(p.Root); ok {
			files = append(files, verify.File{Path: filepath.Join(common, "config"), Rel: ".git/config"},
				verify.File{Path: filepath.Join(common, "info", "attributes"), Rel: ".git/info/attributes"})
		}
		// When the work on the task started (marker.go): moved later,
		// what the agent made would reach its guards.
		files = append(files, verify.File{Path: filepath.Join(l.tree.Repo().GitDir(), workSinceFile), Rel: "worktree git folder/" + workSinceFile})
	}
	if l.tree != nil && l.dir != p.Root && (!confined || l.env.Rooms.Layers().Namespaces == "") {
		// Confined without namespaces, Landlock cannot keep the
		// worktree's .git file read-only inside the worktree.
		files = append(files, verify.File{Path: filepath.Join(l.dir, ".git"), Rel: "worktree/.git"})
	}
	if !confined {
		files = append(files, toolConfigFiles(cfg)...)
	}
	if l.slot > 0 {
		// Other slots write the run's state and tree.json meanwhile: of
		// the runner's files, only config.toml is judged, and only where
		// the agent can reach it.
		if !confined {
			files = append(files, verify.File{Path: p.Config(), Rel: p.Rel(p.Config())})
		}
		return verify.Judged{Root: l.dir, Protect: globs, Files: files}
	}
	if confined && l.dir != p.Root {
		// Confined to a worktree beside the checkout: .runner/ is out of
		// reach, and what changes there is the person's or the runner's.
		return verify.Judged{Root: l.dir, Protect: globs, Files: files}
	}
	return verify.Judged{
		Root: l.dir, RunnerDir: p.Dir,
		Inputs:    l.tree == nil || !cfg.Git.Worktree || !confined,
		SkipState: judgedSkip,
		Protect:   globs,
		Files:     files,
	}
}

// toolConfigFiles are the person's tool configuration files (hooks,
// notify programs, instructions of ~/.claude and ~/.codex), judged where
// the agent runs unconfined: no room keeps it from them.
func toolConfigFiles(cfg *config.Config) []verify.File {
	home, _ := os.UserHomeDir()
	var files []verify.File
	for _, p := range sandbox.ToolConfigFiles(room.ChainEnvs(cfg)) {
		rel := p
		if r, err := filepath.Rel(home, p); err == nil && home != "" && !strings.HasPrefix(r, "..") {
			rel = "~/" + filepath.ToSlash(r)
		}
		files = append(files, verify.File{Path: p, Rel: rel})
	}
	return files
}

// judgedSkip are the files of state/ that judge nothing: run_state.json,
// which the runner writes while the agent works (the ledger checks it
// against what it wrote), output.schema.json, written again before every
// agent run, and the requests a person leaves there.
var judgedSkip = []string{"run_state.json", "output.schema.json", "stop", "pause", "setup.log"}

// Program is the run of an iteration's program (its agent, or with
// opts.Review its reviewer) in the lane, with its judges kept under
// tamperDir (named with prefix in meta.json).
func (l *Local) Program(opts executor.Options, req executor.Request, tamperDir, prefix string) iteration.Spec {
	n := req.Iteration
	return iteration.Spec{
		Request: req, Executor: opts, Judged: l.Judged(),
		TamperDir: tamperDir, TamperPrefix: prefix,
		Hooks: iteration.Hooks{Outside: l.env.Lock.Outside, Exited: func() error { return l.env.Care.AgentExited(n) }},
	}
}
