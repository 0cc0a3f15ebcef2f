package state

import (
	"fmt"
	"strings"
)

// TestTally is how far the tests of a guard (or of a task's checks) are,
// from their reports (SPEC §18): how many passed of how many, how many
// passed on the baseline, and the units whose tests could not run (a
// package that does not build). It is what `status`, `report`, the
// dashboard and `--json` show as "tests: 4 of 12 passing (baseline 4)".
type TestTally struct {
	Passing int `json:"passing"`
	Total   int `json:"total"`
	// Baseline counts the tests that passed where the work started from;
	// nil when unknown.
	Baseline *int `json:"baseline,omitempty"`
	// Broken names the units whose tests could not run ("example.com/x:
	// build failed").
	Broken []string `json:"broken,omitempty"`
}

// String is the tally as people read it.
func (t TestTally) String() string {
	s := fmt.Sprintf("tests: %d of %d passing", t.Passing, t.Total)
	if t.Baseline != nil {
		s += fmt.Sprintf(" (baseline %d)", *t.Baseline)
	}
	if n := len(t.Broken); n > 0 {
		names := t.Broken[:min(n, 3)]
		s += "; cannot run: " + strings.Join(names, ", ")
		if n > len(names) {
			s += fmt.Sprintf(" and %d more", n-len(names))
		}
	}
	return s
}

// Passed counts the tests of the result's report that passed.
func (g GuardMeta) Passed() int { return g.Tests - g.Failed - g.Skipped }

// Tally sums the reports of results: nil when none was read (no report,
// or none could be read). The baseline is summed only when every result
// with a report has one.
func Tally(results []GuardMeta) *TestTally {
	var t *TestTally
	baseline, known := 0, true
	for _, g := range results {
		if g.Report == "" || g.ReportError != "" || g.Tests == 0 && len(g.Broken) == 0 {
			continue
		}
		if t == nil {
			t = &TestTally{}
		}
		t.Passing += g.Passed()
		t.Total += g.Tests
		t.Broken = append(t.Broken, g.Broken...)
		if g.BaselinePassed != nil {
			baseline += *g.BaselinePassed
		} else {
			known = false
		}
	}
	if t != nil && known {
		t.Baseline = &baseline
	}
	return t
}

// TallyOf sums what the guards found on a baseline: the tests of the
// guards with a report that was read.
func TallyOf(b *Baseline) *TestTally {
	if b == nil {
		return nil
	}
	var t *TestTally
	for _, g := range b.Results {
		if !g.HasReport() {
			continue
		}
		if t == nil {
			t = &TestTally{}
		}
		t.Passing += len(g.Passing)
		t.Total += len(g.Passing) + len(g.Failing) + g.Skipped
		t.Broken = append(t.Broken, g.BrokenNames()...)
	}
	return t
}
