package loop

import (
	"fmt"
	"slices"

	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
	"github.com/runner-cli/runner/internal/tree"
)

// The guards and the task's checks judge an iteration whose agent says
// done (SPEC §6, §18), where its lane runs them (package lane); the
// coordinator notes what came of them.

// judged notes what came of the guards lane l ran for meta's iteration:
// what they changed of their judges (they ran the agent's code), which
// fails them, and the test reports that could not be read.
func (r *Runner) judged(l lane.Lane, meta *state.Meta) lane.Judged {
	return func(j *iteration.Judgement) error {
		if before := len(meta.Tamper); len(j.Tamper) > 0 || l.Watched() {
			if err := r.noteTamper(l, meta, j.Tamper); err != nil {
				return err
			}
			if changed := len(meta.Tamper) - before; changed > 0 {
				j.Verdict = state.GuardFail
				j.Results = append(j.Results, state.GuardMeta{Name: tamperGuard, ExitCode: 1, Status: state.GuardFail,
					Error: fmt.Sprintf("%d protected path(s) changed while the guards ran", changed)})
			}
		}
		r.noteUnreadReports(*j)
		return nil
	}
}

// guardsWillRun reports whether the guards run for an iteration whose
// agent is done: only when it says done and guards or checks judge it.
func (r *Runner) guardsWillRun(meta *state.Meta) bool {
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
func (r *Runner) noteUnreadReports(j iteration.Judgement) {
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
