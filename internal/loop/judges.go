package loop

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/verify"
)

// The judges of an iteration (SPEC §13) are the guards and the tree loaded
// before its agent started, the runner's state, and the verify.protect
// paths (package lane). What the agent changes of them is found when it
// exits, kept under runs/N/tamper/, put back, and fails the attempt: only
// the runner decides that a task is done. The coordinator notes it.

// tamperGuard is the name of the guard result a tampered attempt fails.
const tamperGuard = "protected paths"

// noteTamper notes what the agent changed of its judges (kept and put
// back by the iteration's run) and of run_state.json since the ledger
// wrote it: in meta.Tamper, the journal, a notice and the webhooks.
func (r *Runner) noteTamper(l lane.Lane, meta *state.Meta, tamper []state.TamperMeta) error {
	dir := filepath.Join(r.p.RunDir(meta.Iteration), "tamper")
	forged, err := r.forgedRunState(l, dir, "tamper/")
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
func (r *Runner) forgedRunState(l lane.Lane, dir, prefix string) ([]state.TamperMeta, error) {
	inSlots, err := r.forgedInSlots(l, dir, prefix)
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
