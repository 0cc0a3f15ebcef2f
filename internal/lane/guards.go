package lane

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/preflight"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// Guards runs the configured guards and the task's checks for meta's
// iteration in the working tree, outside the run's lock, with their logs
// guard.log and failure.log in logDir, judged against the baseline of
// key; judged notes what came of them, and what they found is kept there
// (the next baseline, should the task land). What the work made outside
// the judged tree is hidden from them, and put back after them.
func (l *Local) Guards(ctx context.Context, meta *state.Meta, logDir, key string, judged Judged) (iteration.Judgement, error) {
	// The config is read under the run's lock: it may be read again
	// meanwhile, at another slot's iteration boundary.
	g := l.judgesOf(meta, key)
	judges := l.Judged()
	g.Judged, g.TamperDir = &judges, filepath.Join(logDir, "tamper")
	g.TamperPrefix = filepath.ToSlash(l.env.Paths.Rel(g.TamperDir)) + "/"
	if rel, err := filepath.Rel(l.env.Paths.RunDir(meta.Iteration), g.TamperDir); err == nil {
		g.TamperPrefix = filepath.ToSlash(rel) + "/"
	}
	hid, err := l.hideOffTree(ctx, meta)
	if err != nil {
		return iteration.Judgement{}, err
	}
	j, err := iteration.Judge(ctx, g, logDir, iteration.Hooks{Outside: l.env.Lock.Outside, Ran: func() { fsutil.FailAt(fsutil.FailGuards, "ran") }})
	if rerr := l.restoreOffTree(meta); err == nil {
		err = rerr
	}
	if err != nil {
		return j, err
	}
	if err := l.judgeOffTree(meta, hid, &j, logDir); err != nil {
		return j, err
	}
	if j.Tamper, err = l.env.Branch.WithMoved(ctx, meta.Iteration, j.Tamper); err != nil {
		return j, err
	}
	if err := judged(&j); err != nil {
		return j, err
	}
	return j, preflight.SaveFound(logDir, j.Found)
}

// judgesOf are the guards and checks that judge meta's iteration in the
// lane, against the baseline of key ("" for none).
func (l *Local) judgesOf(meta *state.Meta, key string) iteration.Guards {
	cfg := l.env.Config()
	g := iteration.Guards{Work: l.dir, Guards: cfg.Guards, Grace: cfg.Executor.KillGrace.Duration, Env: l.guardEnv(meta)}
	if meta.CheckSpecs == nil {
		// Resumed from the in-flight marker alone: the tree as it is now.
		if t, err := l.env.Tree(); err == nil {
			meta.CheckSpecs = CheckSpecs(tree.ChecksOf(t, meta.Node))
			meta.Removes = tree.RemovesOf(t, meta.Node)
		}
	}
	for _, c := range meta.CheckSpecs {
		g.Checks = append(g.Checks, iteration.CheckOf(c))
	}
	g.Removes = meta.Removes
	if key != "" {
		g.Baseline = l.env.Baseline(cfg.Guards, key)
	}
	if room, _, err := l.Room(meta.Iteration); err == nil {
		g.Room = room
	}
	return g
}

// guardEnv is the guards' environment: the iteration, as the agent has
// it, so that what they leave behind is found like the agent's, and the
// iteration's temporary directory where the lane is confined.
func (l *Local) guardEnv(meta *state.Meta) []string {
	env := []string{"RUNNER_DIR=" + l.env.Paths.Dir, "RUNNER_ITERATION=" + strconv.Itoa(meta.Iteration), "RUNNER_NODE_ID=" + meta.Node}
	if l.Confined() {
		env = append(env, TempEnv(l.env.Rooms.TempDir(meta.Iteration))...)
	}
	return env
}

// TempEnv points TMPDIR at dir ("" for none).
func TempEnv(dir string) []string {
	if dir == "" {
		return nil
	}
	return []string{"TMPDIR=" + dir}
}

// CheckSpecs are checks as meta.json keeps them.
func CheckSpecs(checks []tree.NodeCheck) []state.CheckSpec {
	out := []state.CheckSpec{}
	for _, c := range checks {
		out = append(out, state.CheckSpec{Node: c.Node, Name: c.Name, Run: c.Run, Timeout: c.Timeout, OutputLimit: c.OutputLimit, Report: c.Report})
	}
	return out
}

// Probe runs a task's own checks once on its untouched checkpoint,
// before its first attempt (SPEC §18): a check that passes there cannot
// tell whether the task is done. It notes those in meta.Vacuous and says
// so; they still judge the task.
func (l *Local) Probe(ctx context.Context, node *tree.Node, meta *state.Meta) {
	if node.Attempts > 0 || len(node.Checks) == 0 {
		return
	}
	checks := make([]iteration.Check, len(node.Checks))
	for i, c := range node.Checks {
		spec := state.CheckSpec{Name: c.Name, Run: c.Run, Timeout: c.Timeout, OutputLimit: c.OutputLimit, Report: c.Report}
		checks[i] = iteration.Check{Node: node.ID, Guard: iteration.CheckOf(spec).Guard}
	}
	dir := filepath.Join(l.env.Paths.RunDir(meta.Iteration), "checks-before")
	if err := fsutil.MkdirAll(dir, 0o755); err != nil {
		return
	}
	room, _, err := l.Room(meta.Iteration)
	if err != nil {
		return
	}
	grace := l.env.Config().Executor.KillGrace.Duration
	passing, tally, err := iteration.Probe(ctx, l.dir, checks, grace, l.guardEnv(meta), room, dir, iteration.Hooks{Outside: l.env.Lock.Outside})
	if err != nil {
		return
	}
	meta.ChecksBefore = tally
	if len(passing) == 0 {
		return
	}
	meta.Vacuous = passing
	fmt.Fprintf(l.out, "#%d %-24s check %s passes before any work: it proves nothing about this task\n",
		meta.Iteration, inert.Line(meta.NodePath), inert.Line(strings.Join(passing, ", ")))
}
