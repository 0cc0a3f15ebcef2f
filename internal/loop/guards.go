package loop

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/preflight"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
	"github.com/runner-cli/runner/internal/tree"
)

// The guards and the task's checks judge an iteration whose agent says
// done (SPEC §6, §18), in the lane's working tree or, for an iteration on
// a worker, there (remote.go).

// runGuards runs the configured guards in the repository root, with the
// iteration in their environment as the agent has it, so that what they
// leave behind is found and stopped like the agent's (leftovers.go).
func (r *worker) runGuards(ctx context.Context, meta *state.Meta) ([]state.GuardMeta, string, error) {
	key := r.ck.BaselineKey()
	if r.remoteJudged {
		return r.workerGuards(meta, key)
	}
	r.ledger.GuardsStarting()
	j, err := r.guardsIn(ctx, meta, r.p.RunDir(meta.Iteration), key)
	if ierr := r.ledger.GuardsEnded(meta.Iteration); ierr != nil {
		return nil, "", ierr
	}
	if err != nil {
		return nil, "", err
	}
	meta.Checks = j.Checks
	if j.Judged {
		meta.Baseline = key
	}
	return j.Results, j.Verdict, nil
}

// guardsIn runs the configured guards and the task's checks for meta's
// iteration in the lane's working tree, outside the run's lock, with
// their logs guard.log and failure.log in logDir, judged against the
// baseline of key, and keeps what the guards found there (the next
// baseline, should the task land).
func (r *worker) guardsIn(ctx context.Context, meta *state.Meta, logDir, key string) (iteration.Judgement, error) {
	// The config is read under the run's lock: it may be read again
	// meanwhile, at another slot's iteration boundary.
	g := r.judgesOf(meta, key)
	judged := r.judged()
	g.Judged, g.TamperDir = &judged, filepath.Join(logDir, "tamper")
	g.TamperPrefix = filepath.ToSlash(r.p.Rel(g.TamperDir)) + "/"
	if rel, err := filepath.Rel(r.p.RunDir(meta.Iteration), g.TamperDir); err == nil {
		g.TamperPrefix = filepath.ToSlash(rel) + "/"
	}
	// What the work made outside the judged tree is hidden from them
	// (offtree.go), and put back after them.
	hid, err := r.hideOffTree(ctx, meta)
	if err != nil {
		return iteration.Judgement{}, err
	}
	j, err := iteration.Judge(ctx, g, logDir, iteration.Hooks{Outside: r.outside, Ran: func() { fsutil.FailAt(fsutil.FailGuards, "ran") }})
	if rerr := r.restoreOffTree(meta); err == nil {
		err = rerr
	}
	if err != nil {
		return j, err
	}
	if err := r.judgeOffTree(meta, hid, &j, logDir); err != nil {
		return j, err
	}
	if j.Tamper, err = r.branch.WithMoved(ctx, meta.Iteration, j.Tamper); err != nil {
		return j, err
	}
	if before := len(meta.Tamper); len(j.Tamper) > 0 || r.slotForgery() {
		// The guards ran the agent's code, which may have changed its judges.
		if err := r.noteTamper(meta, j.Tamper); err != nil {
			return j, err
		}
		if changed := len(meta.Tamper) - before; changed > 0 {
			j.Verdict = state.GuardFail
			j.Results = append(j.Results, state.GuardMeta{Name: tamperGuard, ExitCode: 1, Status: state.GuardFail,
				Error: fmt.Sprintf("%d protected path(s) changed while the guards ran", changed)})
		}
	}
	r.noteUnreadReports(j)
	return j, preflight.SaveFound(logDir, j.Found)
}

// guardEnv is the guards' environment: the iteration, as the agent has
// it, so that what they leave behind is found like the agent's, and the
// iteration's temporary directory where the run is confined.
func (r *worker) guardEnv(meta *state.Meta) []string {
	env := []string{"RUNNER_DIR=" + r.p.Dir, "RUNNER_ITERATION=" + strconv.Itoa(meta.Iteration), "RUNNER_NODE_ID=" + meta.Node}
	if r.rooms.Confined(r.workDir) {
		env = append(env, tmpEnv(r.rooms.TempDir(meta.Iteration))...)
	}
	return env
}

// tmpEnv points TMPDIR at dir ("" for none).
func tmpEnv(dir string) []string {
	if dir == "" {
		return nil
	}
	return []string{"TMPDIR=" + dir}
}

// guardsWillRun reports whether the guards run for an iteration whose
// agent is done: only when it says done and guards or checks judge it.
func (r *worker) guardsWillRun(meta *state.Meta) bool {
	if meta.AgentStatus != "done" {
		return false
	}
	if len(r.cfg.Guards) > 0 {
		return true
	}
	if meta.CheckSpecs != nil {
		return len(meta.CheckSpecs) > 0
	}
	t, err := r.loadTree()
	return err == nil && len(tree.ChecksOf(t, meta.Node)) > 0
}

// noteUnreadReports says once per guard and run that its test report
// could not be read: it is judged by its exit status.
func (r *worker) noteUnreadReports(j iteration.Judgement) {
	for _, m := range append(append([]state.GuardMeta(nil), j.Results...), j.Checks...) {
		if m.ReportError == "" || r.cache.unreadReports[m.Name] {
			continue
		}
		if r.cache.unreadReports == nil {
			r.cache.unreadReports = map[string]bool{}
		}
		r.cache.unreadReports[m.Name] = true
		fmt.Fprintf(r.opts.Notices, "runner: the test report of %s could not be read (%s): it is judged by its exit status\n",
			inert.Line(m.Name), inert.Line(textfmt.OneLine(m.ReportError, 200)))
	}
}

// allVacuous reports whether every check that judged meta's iteration
// passed on the untouched checkpoint before its first attempt.
func allVacuous(meta *state.Meta) bool {
	if len(meta.Checks) == 0 {
		return false
	}
	for _, c := range meta.Checks {
		if c.Node != meta.Node || !slices.Contains(meta.Vacuous, c.Name) {
			return false
		}
	}
	return true
}
