package loop

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
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

// judged says what is judged: in place, the runner's inputs too; beside a
// linked worktree they are out of the agent's tree, and the person's.
func (r *Runner) judged() verify.Judged {
	globs, _ := verify.ParseGlobs(r.cfg.Verify.Protect) // checked when the config loaded
	return verify.Judged{
		Root: r.workDir, RunnerDir: r.p.Dir,
		Inputs:    r.ck == nil || !r.cfg.Git.Worktree,
		SkipState: judgedSkip,
		Protect:   globs,
	}
}

// judgedSkip are the files of state/ that judge nothing: run_state.json,
// which the runner writes while the agent works (the ledger checks it
// against what it wrote), output.schema.json, written again before every
// agent run, and the requests a person leaves there.
var judgedSkip = []string{"run_state.json", "output.schema.json", "stop", "pause", "setup.log"}

// checkJudges finds what the agent changed of the judges since base was
// taken, keeps the agent's version under runs/N/tamper/, puts the
// originals back, and notes each path in meta.Tamper and the journal.
func (r *Runner) checkJudges(meta *state.Meta, base *verify.Baseline) error {
	changes, err := base.Check()
	if err != nil {
		return fmt.Errorf("check what the agent of iteration %d changed: %w", meta.Iteration, err)
	}
	forged, err := r.ledger.RunStateChanged()
	if err != nil {
		return err
	}
	if len(changes) == 0 && forged == nil {
		return nil
	}
	dir := filepath.Join(r.p.RunDir(meta.Iteration), "tamper")
	kept, err := base.Keep(changes, dir)
	if err != nil {
		return fmt.Errorf("keep what the agent changed of the judges: %w", err)
	}
	if err := base.Restore(changes); err != nil {
		return fmt.Errorf("put back what the agent changed of the judges: %w", err)
	}
	var paths []string
	for i, c := range changes {
		t := state.TamperMeta{Path: c.Rel, Change: c.Kind}
		if kept[i] != "" {
			t.Kept = "tamper/" + kept[i]
		}
		meta.Tamper = append(meta.Tamper, t)
		paths = append(paths, c.Rel)
	}
	if forged != nil {
		rel := r.p.Rel(r.p.RunState())
		t := state.TamperMeta{Path: rel, Change: verify.Modified, Kept: "tamper/" + rel}
		if err := fsutil.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err == nil {
			fsutil.WriteFileAtomic(filepath.Join(dir, rel), forged, 0o644)
		}
		meta.Tamper = append(meta.Tamper, t)
		paths = append(paths, rel)
	}
	r.notifyTamper(meta)
	r.log.Warn("the agent changed files that judge it: put back, and the attempt fails", "iteration", meta.Iteration, "node", meta.Node,
		"paths", strings.Join(paths, ", "), "kept", r.p.Rel(dir))
	fmt.Fprintf(r.opts.Notices, "runner: iteration %d changed %s: put back, kept in %s; the attempt fails (edit these files between iterations, or `runner pause` first)\n",
		meta.Iteration, inert.Line(strings.Join(paths, ", ")), r.p.Rel(dir))
	return r.ledger.Journal(state.Record{Iteration: meta.Iteration, Node: meta.Node, Event: state.EventTamper, Paths: paths})
}

// failTampered fails the guards of an attempt that changed its judges,
// without running them: failure.log names each path for the next attempt.
func (r *Runner) failTampered(meta *state.Meta) error {
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
