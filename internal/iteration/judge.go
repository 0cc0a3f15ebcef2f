package iteration

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/guard"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/verify"
)

// Guards is what judges the work after its agent says done (SPEC §6,
// §18): the global guards, judged against the baseline of the checkpoint
// the work started from, and the task's checks, which must pass. All run
// in Work with Env added to their environment, stopped after Grace when
// cancelled or timed out.
type Guards struct {
	Work   string
	Guards []config.Guard
	Checks []Check
	Grace  time.Duration
	Env    []string
	// Baseline is what the guards found on the work's starting
	// checkpoint; nil excuses nothing: a guard with a report fails by any
	// failing test, one without by its exit status.
	Baseline *state.Baseline
	// Removes are the tests the work may remove (the task's removes):
	// their absence from a report is no regression.
	Removes []string
	// Room, when set, confines the guards and checks (SPEC §19): they run
	// the agent's code.
	Room *sandbox.Room
	// Judged, when set, is what the guards may not change either, taken
	// before they start and checked when they end (SPEC §20): they run
	// the agent's code, which could rewrite a protected test before the
	// next guard runs it. What changed is kept under TamperDir (named
	// with TamperPrefix), put back, and fails the work.
	Judged                  *verify.Judged
	TamperDir, TamperPrefix string
}

// Check is a check of the task or of one of its parents.
type Check struct {
	Node  string // the node that carries it
	Guard config.Guard
}

// CheckOf is a check as meta.json keeps it, run as a guard with the
// guards' defaults where it leaves them out.
func CheckOf(c state.CheckSpec) Check {
	g := config.Guard{Name: c.Name, Run: c.Run, Report: c.Report,
		Timeout: config.Duration{Duration: config.DefaultGuardTimeout}, OutputLimit: config.DefaultGuardOutputLimit}
	if d, err := time.ParseDuration(c.Timeout); err == nil && d > 0 {
		g.Timeout.Duration = d
	}
	if s, err := config.ParseSize(c.OutputLimit); err == nil && s > 0 {
		g.OutputLimit = s
	}
	return Check{Node: c.Node, Guard: g}
}

// Judgement is what the guards and checks said of the work.
type Judgement struct {
	Results []state.GuardMeta // the guards'
	Checks  []state.GuardMeta
	Verdict string // state.GuardPass or state.GuardFail
	// Found is what the guards found on this work: the baseline of its
	// tree, should it become the next checkpoint.
	Found []state.BaselineGuard
	// Judged says the guards were judged against a baseline.
	Judged bool
	// Tamper is what the guards' run changed of Guards.Judged: kept, put
	// back, and the verdict is a failure.
	Tamper []state.TamperMeta
}

// Judge runs the guards and checks of g, with their logs guard.log and
// failure.log in logDir; failure.log starts with the tests that
// regressed or fail, each with the head of its message. The error is
// the runner's own failure or the context's end; the results so far are
// not a judgement then.
func Judge(ctx context.Context, g Guards, logDir string, h Hooks) (Judgement, error) {
	specs := append([]config.Guard(nil), g.Guards...)
	for _, c := range g.Checks {
		specs = append(specs, c.Guard)
	}
	var j Judgement
	var tests []testLines
	k := 0
	judge := func(spec config.Guard, res *guard.Result) {
		i := k
		k++
		if i < len(g.Guards) {
			m, found, lines := judgeGuard(spec, *res, g.Baseline.Guard(spec.Name), g.Removes)
			res.Status, res.Error = m.Status, m.Error
			j.Results, j.Found, tests = append(j.Results, m), append(j.Found, found), append(tests, lines)
			return
		}
		m, lines := judgeCheck(spec, *res)
		m.Node = g.Checks[i-len(g.Guards)].Node
		j.Checks, tests = append(j.Checks, m), append(tests, lines)
	}
	var verdict string
	var base *verify.Baseline
	var err error
	if g.Judged != nil {
		if base, err = verify.Take(*g.Judged); err != nil {
			return Judgement{}, fmt.Errorf("read the judges before the guards: %w", err)
		}
	}
	failureLog := filepath.Join(logDir, "failure.log")
	h.outside(func() {
		_, verdict, err = guard.RunJudged(ctx, g.Work, specs, filepath.Join(logDir, "guard.log"), failureLog, g.Grace, g.Env, judge, g.Room)
	})
	if err != nil {
		return Judgement{}, err
	}
	if h.Ran != nil {
		h.Ran()
	}
	j.Verdict, j.Judged = verdict, g.Baseline != nil
	if base != nil {
		if j.Tamper, err = RestoreJudges(base, g.TamperDir, g.TamperPrefix); err != nil {
			return Judgement{}, err
		}
		if len(j.Tamper) > 0 {
			j.Verdict = guard.VerdictFail
			return j, writeTamperedByGuards(failureLog, j.Tamper)
		}
	}
	if verdict == guard.VerdictFail {
		if err := prependTests(failureLog, tests); err != nil {
			return Judgement{}, err
		}
	}
	return j, nil
}

// writeTamperedByGuards starts failure.log with what the guards' run
// changed of the judges, for the next attempt.
func writeTamperedByGuards(failureLog string, tamper []state.TamperMeta) error {
	var b strings.Builder
	b.WriteString("The guards, running this work's code, changed files that judge the work, which is not allowed. They were put back as they were, and the attempt failed:\n\n")
	for _, t := range tamper {
		fmt.Fprintf(&b, "- %s (%s)\n", t.Path, t.Change)
	}
	b.WriteString("\nThe code and tests you write must not write to these files.\n\n")
	old, _ := fsutil.ReadLimited(failureLog, 1<<20, true)
	return fsutil.WriteFileAtomic(failureLog, append([]byte(b.String()), old...), 0o644)
}

// Probe runs checks on the untouched checkpoint, before any work, with
// their logs in logDir, and returns the names of those that pass (they
// cannot tell whether the work is done) and the tally of their reports'
// tests (nil without one).
func Probe(ctx context.Context, work string, checks []Check, grace time.Duration, env []string, room *sandbox.Room, logDir string, h Hooks) ([]string, *state.TestTally, error) {
	specs := make([]config.Guard, len(checks))
	for i, c := range checks {
		specs[i] = c.Guard
	}
	var results []guard.Result
	var err error
	h.outside(func() {
		results, _, err = guard.RunJudged(ctx, work, specs, filepath.Join(logDir, "guard.log"), filepath.Join(logDir, "failure.log"), grace, env, nil, room)
	})
	if err != nil {
		return nil, nil, err
	}
	var passing []string
	metas := make([]state.GuardMeta, len(results))
	for i, r := range results {
		if r.Status == guard.StatusPass {
			passing = append(passing, r.Name)
		}
		metas[i] = metaOf(specs[i], r)
	}
	return passing, state.Tally(metas), nil
}
