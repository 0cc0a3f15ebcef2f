package loop

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
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

// tamperGuard is the name of the guard result a tampered attempt fails.
const tamperGuard = "protected paths"

// judged says what is judged. An agent confined to its worktree (SPEC
// §19) cannot reach the runner's files nor the repository's git
// directory: there config.toml and tree.json are the person's, whose
// edits apply at the next boundary. Unconfined, it reaches them through
// RUNNER_DIR or a path whatever the mode, so they are judged, and with
// them the git configuration and the worktree's .git file that the
// runner's own git would read.
func (r *worker) judged() verify.Judged {
	globs, _ := verify.ParseGlobs(r.cfg.Verify.Protect) // checked when the config loaded
	var files []verify.File
	confined := r.rooms.Confined(r.workDir)
	if !confined && r.ck != nil {
		if common, ok := state.GitCommonDir(r.p.Root); ok {
			files = append(files, verify.File{Path: filepath.Join(common, "config"), Rel: ".git/config"},
				verify.File{Path: filepath.Join(common, "info", "attributes"), Rel: ".git/info/attributes"})
		}
		// When the work on the task started (offtree.go): moved later,
		// what the agent made would reach its guards.
		files = append(files, verify.File{Path: filepath.Join(r.ck.Repo().GitDir(), workSinceFile), Rel: "worktree git folder/" + workSinceFile})
	}
	if r.ck != nil && r.workDir != r.p.Root && (!confined || r.rooms.Layers().Namespaces == "") {
		// Confined without namespaces, Landlock cannot keep the
		// worktree's .git file read-only inside the worktree.
		files = append(files, verify.File{Path: filepath.Join(r.workDir, ".git"), Rel: "worktree/.git"})
	}
	if !confined {
		files = append(files, r.toolConfigFiles()...)
	}
	if r.slot > 0 {
		// Other slots write the run's state and tree.json meanwhile: of
		// the runner's files, only config.toml is judged, and only where
		// the agent can reach it.
		if !confined {
			files = append(files, verify.File{Path: r.p.Config(), Rel: r.p.Rel(r.p.Config())})
		}
		return verify.Judged{Root: r.workDir, Protect: globs, Files: files}
	}
	if confined && r.workDir != r.p.Root {
		// Confined to a worktree beside the checkout: .runner/ is out of
		// reach, and what changes there is the person's or the runner's.
		return verify.Judged{Root: r.workDir, Protect: globs, Files: files}
	}
	return verify.Judged{
		Root: r.workDir, RunnerDir: r.p.Dir,
		Inputs:    r.ck == nil || !r.cfg.Git.Worktree || !confined,
		SkipState: judgedSkip,
		Protect:   globs,
		Files:     files,
	}
}

// toolConfigFiles are the person's tool configuration files (hooks,
// notify programs, instructions of ~/.claude and ~/.codex), judged where
// the agent runs unconfined: no room keeps it from them.
func (r *worker) toolConfigFiles() []verify.File {
	home, _ := os.UserHomeDir()
	var files []verify.File
	for _, p := range sandbox.ToolConfigFiles(room.ChainEnvs(r.cfg)) {
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

// noteTamper notes what the agent changed of its judges (kept and put
// back by the iteration's run) and of run_state.json since the ledger
// wrote it: in meta.Tamper, the journal, a notice and the webhooks.
func (r *worker) noteTamper(meta *state.Meta, tamper []state.TamperMeta) error {
	dir := filepath.Join(r.p.RunDir(meta.Iteration), "tamper")
	forged, err := r.forgedRunState(dir, "tamper/")
	if err != nil {
		return err
	}
	tamper = append(tamper, forged...)
	if len(tamper) == 0 {
		return nil
	}
	meta.Tamper = append(meta.Tamper, tamper...)
	paths := tamperedPaths(tamper)
	r.hooks.Tamper(meta, r.p.Rel(r.p.RunDir(meta.Iteration)))
	r.log.Warn("the agent changed files that judge it: put back, and the attempt fails", "iteration", meta.Iteration, "node", meta.Node,
		"paths", strings.Join(paths, ", "), "kept", r.p.Rel(dir))
	var places []string
	for _, t := range tamper {
		place := r.p.Rel(dir)
		if strings.HasPrefix(t.Kept, "refs/") {
			place = t.Kept
		}
		if !slices.Contains(places, place) {
			places = append(places, place)
		}
	}
	where := strings.Join(places, ", ")
	fmt.Fprintf(r.opts.Notices, "runner: iteration %d changed %s: put back, kept in %s; the attempt fails (edit these files between iterations, or `runner pause` first)\n",
		meta.Iteration, inert.Line(strings.Join(paths, ", ")), inert.Line(where))
	return r.ledger.Journal(state.Record{Iteration: meta.Iteration, Node: meta.Node, Event: state.EventTamper, Paths: paths})
}

// forgedRunState finds whether run_state.json changed since the ledger
// wrote it; a changed one (the ledger keeps its own) is kept under dir
// and named with prefix. In unconfined slots, so are the journal lines
// and tree.json statuses another program forged (forgedInSlots).
func (r *worker) forgedRunState(dir, prefix string) ([]state.TamperMeta, error) {
	inSlots, err := r.forgedInSlots(dir, prefix)
	if err != nil {
		return nil, err
	}
	forged, err := r.ledger.RunStateChanged()
	if err != nil || forged == nil {
		return inSlots, err
	}
	rel := r.p.Rel(r.p.RunState())
	if err := fsutil.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err == nil {
		fsutil.WriteFileAtomic(filepath.Join(dir, rel), forged, 0o644)
	}
	return append(inSlots, state.TamperMeta{Path: rel, Change: verify.Modified, Kept: prefix + rel}), nil
}

// programSpec is the run of an iteration's program (its agent, or with
// opts.Review its reviewer) in this worker's lane, with its judges kept
// under tamperDir (named with prefix in meta.json).
func (r *worker) programSpec(opts executor.Options, req executor.Request, tamperDir, prefix string) iteration.Spec {
	n := req.Iteration
	return iteration.Spec{
		Request: req, Executor: opts, Judged: r.judged(),
		TamperDir: tamperDir, TamperPrefix: prefix,
		Hooks: iteration.Hooks{Outside: r.outside, Exited: func() error { return r.ledger.AgentExited(n) }},
	}
}

// tamperedPaths are the paths of the changes.
func tamperedPaths(tamper []state.TamperMeta) []string {
	paths := make([]string, 0, len(tamper))
	for _, t := range tamper {
		paths = append(paths, t.Path)
	}
	return paths
}

// failTampered fails the guards of an attempt that changed its judges,
// without running them: failure.log names each path for the next attempt.
func (r *worker) failTampered(meta *state.Meta) error {
	var b strings.Builder
	b.WriteString("The previous attempt changed files that judge the work, which is not allowed. They were put back as they were, and the attempt failed:\n\n")
	for _, t := range meta.Tamper {
		fmt.Fprintf(&b, "- %s (%s)\n", t.Path, t.Change)
	}
	b.WriteString("\nDo the task without changing these files. If the task cannot be done as written, or its checks contradict its goal, answer status \"blocked\" with your question.\n")
	log := filepath.Join(r.p.RunDir(meta.Iteration), "failure.log")
	if err := fsutil.WriteFileAtomic(log, []byte(b.String()), 0o644); err != nil {
		return err
	}
	meta.Guard = state.GuardFail
	meta.Guards = []state.GuardMeta{{Name: tamperGuard, ExitCode: 1, Status: state.GuardFail, Error: fmt.Sprintf("%d protected path(s) changed", len(meta.Tamper))}}
	return nil
}
