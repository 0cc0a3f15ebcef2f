package iteration

import (
	"errors"
	"fmt"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/guard"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/testreport"
)

// The verdict of a guard with a test report (SPEC §18) is by test, both
// ways: it fails when a test fails that its baseline does not excuse
// (failing there and still failing), new tests included; when a unit's
// tests could not run (a package that does not build) where they could
// on the baseline; and when a test that passed there is absent from the
// report or skipped now, unless the task removes it. The exit status
// stands when the report could not be read.

// changes is what a report shows against a baseline: each list in the
// report's order.
type changes struct {
	regressed  []string // passed on the baseline, fail now
	newFailing []string // fail now, and neither failed nor passed there
	vanished   []string // passed there, absent or skipped now, not removed
	newBroken  []testreport.Broken
}

func (c changes) any() bool {
	return len(c.regressed)+len(c.newFailing)+len(c.vanished)+len(c.newBroken) > 0
}

// compare compares rep with base (nil: nothing is excused), the tests
// in removes allowed to vanish.
func compare(rep *testreport.Report, base *state.BaselineGuard, removes []string) changes {
	var c changes
	for _, t := range rep.Tests {
		if t.Status != testreport.Fail {
			continue
		}
		switch {
		case base != nil && base.PassedTest(t.Name):
			c.regressed = append(c.regressed, t.Name)
		case base == nil || !base.FailedTest(t.Name):
			c.newFailing = append(c.newFailing, t.Name)
		}
	}
	for _, b := range rep.Broken {
		if base == nil || !base.BrokenUnit(b.Unit) {
			c.newBroken = append(c.newBroken, b)
		}
	}
	if base == nil {
		return c
	}
	for _, name := range base.Passing {
		t, ok := rep.Lookup(name)
		if ok && t.Status != testreport.Skip || removed(name, removes) {
			continue
		}
		c.vanished = append(c.vanished, name)
	}
	return c
}

// removed reports whether the test named name is one of removes: a name
// equal to an entry, or ending with it after a "/" or "." (the test
// "example.com/calc/TestOld" or "tests.test_calc.test_old" by its own
// name), or a subtest of such a test, or a test of a package or class an
// entry names ("example.com/calc/legacy").
func removed(name string, removes []string) bool {
	for _, e := range removes {
		for i := strings.Index(name, e); i >= 0; {
			end := i + len(e)
			if (i == 0 || name[i-1] == '/' || name[i-1] == '.') && (end == len(name) || name[end] == '/' || name[end] == '.') {
				return true
			}
			next := strings.Index(name[i+1:], e)
			if next < 0 {
				break
			}
			i += 1 + next
		}
	}
	return false
}

// judgeGuard judges a guard's result against its baseline, base (nil
// without one), the tests in removes allowed to vanish. With a test
// report the verdict is by test (compare): against a baseline with a
// report, the failures it had are excused; without one, none is. A
// guard that timed out or was killed fails whatever its report says,
// and one whose report could not be read is judged by its exit status.
// It returns the result for meta.json, what the guard found (for the
// next baseline) and the tests to name in failure.log.
func judgeGuard(g config.Guard, res guard.Result, base *state.BaselineGuard, removes []string) (state.GuardMeta, state.BaselineGuard, testLines) {
	m := metaOf(g, res)
	found := Found(g, res)
	lines := testLines{guard: g.Name}
	exited := res.Status == guard.StatusFail && res.ExitCode > 0 // it ran to its end and failed
	if res.Report == nil {
		return m, found, lines
	}
	if base != nil && !base.HasReport() {
		base = nil
	}
	if base != nil {
		passed := len(base.Passing)
		m.BaselinePassed = &passed
	}
	c := compare(res.Report, base, removes)
	lines.note(res, c, base != nil)
	if res.Status != guard.StatusPass && !exited {
		return m, found, lines // timed out, killed, not started
	}
	switch {
	case c.any():
		m.Status, m.Error = guard.StatusFail, c.say(base != nil)
		m.Regressed = kept(c.regressed)
		m.NewFailing = kept(c.newFailing)
		m.Vanished = kept(c.vanished)
		m.NewBroken = kept(brokenNames(c.newBroken))
	case exited && base == nil:
		// No baseline to judge against: its failing tests were named.
	case exited && base.Passed:
		// It failed with no failing test to show for it (a vet or a
		// build step of the command): it passed before, so that is new.
		m.Note = "no test fails, but the command failed where it passed before"
	case exited:
		m.Status, m.Error = guard.StatusPass, ""
		m.Note = fmt.Sprintf("exit %d: %d test(s) fail as they did before; none that passed before fails", res.ExitCode, len(found.Failing))
		if n := len(found.Broken); n > 0 {
			m.Note += fmt.Sprintf("; %d unit(s) broken as before (%s)", n, listHead(found.BrokenNames(), 3))
		}
	}
	return m, found, lines
}

// judgeCheck judges a check: it must pass, and with a report, no test
// of it may fail and none of its units may be broken.
func judgeCheck(g config.Guard, res guard.Result) (state.GuardMeta, testLines) {
	m := metaOf(g, res)
	lines := testLines{guard: g.Name, check: true}
	if res.Report == nil {
		return m, lines
	}
	c := compare(res.Report, nil, nil)
	lines.note(res, c, false)
	if res.Status == guard.StatusPass && c.any() {
		m.Status, m.Error = guard.StatusFail, "exited 0, but its report shows "+c.say(false)
		m.NewFailing = kept(c.newFailing)
		m.NewBroken = kept(brokenNames(c.newBroken))
	}
	return m, lines
}

// say is the one-line reason of a failing verdict.
func (c changes) say(baseline bool) string {
	var parts []string
	if n := len(c.regressed); n > 0 {
		parts = append(parts, fmt.Sprintf("%d test(s) that passed before fail now: %s", n, listHead(c.regressed, 5)))
	}
	if n := len(c.newFailing); n > 0 {
		what := "%d test(s) fail: %s"
		if baseline {
			what = "%d test(s) fail that did not fail before: %s"
		}
		parts = append(parts, fmt.Sprintf(what, n, listHead(c.newFailing, 5)))
	}
	if n := len(c.newBroken); n > 0 {
		parts = append(parts, fmt.Sprintf("%d unit(s) whose tests could not run: %s", n, listHead(brokenNames(c.newBroken), 5)))
	}
	if n := len(c.vanished); n > 0 {
		parts = append(parts, fmt.Sprintf("%d test(s) that passed before vanished: %s", n, listHead(c.vanished, 5)))
	}
	return strings.Join(parts, "; ")
}

// brokenNames names broken units as meta.json keeps them: "unit: reason".
func brokenNames(units []testreport.Broken) []string {
	names := make([]string, len(units))
	for i, b := range units {
		names[i] = b.Unit + ": " + b.Reason
	}
	return names
}

// kept is the start of names that meta.json keeps.
func kept(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	return names[:min(len(names), state.MaxRegressedNames)]
}

// Found is what a guard found, as a baseline keeps it: whether it
// passed, and the tests and broken units of its report when it was read.
func Found(g config.Guard, res guard.Result) state.BaselineGuard {
	found := state.BaselineGuard{Name: g.Name, Passed: res.Status == guard.StatusPass, Report: g.Report}
	if g.Report != "" && res.ReportErr != nil {
		found.ReportError = res.ReportErr.Error()
	}
	if res.Report == nil {
		return found
	}
	for _, t := range res.Report.Tests {
		switch t.Status {
		case testreport.Pass:
			found.Passing = append(found.Passing, t.Name)
		case testreport.Fail:
			found.Failing = append(found.Failing, t.Name)
		default:
			found.Skipped++
		}
	}
	for _, b := range res.Report.Broken {
		found.Broken = append(found.Broken, state.BrokenUnit{Unit: b.Unit, Reason: b.Reason})
	}
	return found
}

// metaOf is a guard's or check's result as meta.json has it.
func metaOf(g config.Guard, res guard.Result) state.GuardMeta {
	m := state.GuardMeta{Name: g.Name, ExitCode: res.ExitCode, DurationMS: res.DurationMS, Status: res.Status, Error: res.Error, Report: g.Report}
	switch {
	case res.Report != nil:
		_, failed, skipped := res.Report.Counts()
		m.Tests, m.Failed, m.Skipped = len(res.Report.Tests), failed, skipped
		m.Broken = kept(brokenNames(res.Report.Broken))
	case g.Report != "" && res.ReportErr != nil && !errors.Is(res.ReportErr, guard.ErrNoReportWritten):
		// A guard that wrote no report fails, saying so in Error.
		m.ReportError = res.ReportErr.Error()
	}
	return m
}

// listHead lists the first n names, and how many more there are.
func listHead(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}
