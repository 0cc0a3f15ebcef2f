package iteration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/guard"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/testreport"
)

func report(tests ...testreport.Test) *testreport.Report {
	r := &testreport.Report{}
	for _, t := range tests {
		r.Add(t)
	}
	return r
}

func pass(name string) testreport.Test { return testreport.Test{Name: name, Status: testreport.Pass} }
func fail(name, msg string) testreport.Test {
	return testreport.Test{Name: name, Status: testreport.Fail, Message: msg}
}
func skip(name string) testreport.Test { return testreport.Test{Name: name, Status: testreport.Skip} }

// TestJudgeGuardAgainstBaseline: a guard with a report is judged by
// test, in both directions: the failures its baseline had are excused,
// and nothing else; without a report, by its exit status.
func TestJudgeGuardAgainstBaseline(t *testing.T) {
	g := config.Guard{Name: "test", Run: "go test -json ./...", Report: "go-json"}
	base := &state.BaselineGuard{Name: "test", Report: "go-json", Passing: []string{"p/TestKeep", "p/TestWrap"}, Failing: []string{"p/TestOld"}}
	failed := guard.Result{Name: "test", ExitCode: 1, Status: guard.StatusFail, Error: "exited with status 1"}
	passed := guard.Result{Name: "test", Status: guard.StatusPass}

	// The old failure still fails, nothing regressed: pass, with a note.
	res := failed
	res.Report = report(pass("p/TestKeep"), pass("p/TestWrap"), fail("p/TestOld", "old"))
	m, found, _ := judgeGuard(g, res, base, nil)
	if m.Status != guard.StatusPass || m.Error != "" || !strings.Contains(m.Note, "exit 1: 1 test(s) fail as they did before") {
		t.Errorf("no regression: %+v; want pass with a note", m)
	}
	if m.Tests != 3 || m.Failed != 1 || *m.BaselinePassed != 2 || found.Passed || len(found.Passing) != 2 || len(found.Failing) != 1 {
		t.Errorf("counts %+v, found %+v", m, found)
	}

	// A test that passed fails now: fail, named, with its message.
	res = failed
	res.Report = report(pass("p/TestKeep"), fail("p/TestWrap", "wrap(ab) = [ab]"), fail("p/TestOld", ""))
	m, _, lines := judgeGuard(g, res, base, nil)
	if m.Status != guard.StatusFail || len(m.Regressed) != 1 || m.Regressed[0] != "p/TestWrap" || !strings.Contains(m.Error, "1 test(s) that passed before fail now: p/TestWrap") {
		t.Errorf("regression: %+v", m)
	}
	var b strings.Builder
	lines.render(&b)
	if !strings.Contains(b.String(), "- p/TestWrap\n  wrap(ab) = [ab]") || strings.Contains(b.String(), "TestOld") {
		t.Errorf("failure.log block:\n%s", b.String())
	}

	// The command failed with no failing test, where it passed before.
	base3 := state.BaselineGuard{Name: "test", Report: "go-json", Passed: true, Passing: []string{"p/TestKeep"}}
	res = failed
	res.Report = report(pass("p/TestKeep"))
	if m, _, _ := judgeGuard(g, res, &base3, nil); m.Status != guard.StatusFail {
		t.Errorf("a failure with no failing test, after a pass: %+v; want fail", m)
	}

	// A timeout fails whatever the report says.
	res = guard.Result{Name: "test", ExitCode: -1, Status: guard.StatusTimeout, Error: "timed out", Report: report(pass("p/TestKeep"))}
	if m, _, _ := judgeGuard(g, res, base, nil); m.Status != guard.StatusTimeout {
		t.Errorf("timeout: %+v", m)
	}

	// No baseline: any failing test fails it, whatever the exit status.
	res = failed
	res.Report = report(fail("p/TestOld", ""))
	if m, _, _ := judgeGuard(g, res, nil, nil); m.Status != guard.StatusFail {
		t.Errorf("no baseline: %+v; want fail", m)
	}
	res = passed
	res.Report = report(pass("p/TestKeep"), fail("p/TestOld", ""))
	if m, _, _ := judgeGuard(g, res, nil, nil); m.Status != guard.StatusFail || !strings.Contains(m.Error, "1 test(s) fail: p/TestOld") {
		t.Errorf("exit 0, a failing test, no baseline: %+v; want fail", m)
	}
	// A report that could not be read: the exit status.
	res = failed
	res.ReportErr = testreport.ErrMalformed
	if m, _, _ := judgeGuard(g, res, base, nil); m.Status != guard.StatusFail || m.ReportError == "" {
		t.Errorf("unreadable report: %+v; want fail, the reason kept", m)
	}
	if m, _, _ := judgeGuard(g, passed, base, nil); m.Status != guard.StatusPass {
		t.Errorf("a pass: %+v", m)
	}
}

// TestVerdictBothWays: what the baseline does not excuse fails a guard
// with a report, each named in meta.json and failure.log: a new test
// that fails, a test skipped before that fails, a unit that broke, a test
// that vanished or is skipped now; a unit broken as before is excused,
// and a vanished test the task removes.
func TestVerdictBothWays(t *testing.T) {
	g := config.Guard{Name: "test", Run: "go test -json ./...", Report: "go-json"}
	base := &state.BaselineGuard{Name: "test", Report: "go-json",
		Passing: []string{"p/TestA", "p/TestB", "p/TestGone", "p/TestOld", "p/TestOld/sub"},
		Failing: []string{"p/TestFails"}, Skipped: 1, Broken: []state.BrokenUnit{{Unit: "q", Reason: "build failed"}}}
	for _, tt := range []struct {
		name    string
		exit    int
		rep     *testreport.Report
		removes []string
		status  string
		field   func(m state.GuardMeta) []string
		want    []string
		says    string
		log     string
	}{
		{"a new test fails", 1, report(pass("p/TestA"), pass("p/TestB"), pass("p/TestGone"), pass("p/TestOld"), pass("p/TestOld/sub"), fail("p/TestFails", ""), fail("p/TestNew", "new boom")),
			nil, guard.StatusFail, func(m state.GuardMeta) []string { return m.NewFailing }, []string{"p/TestNew"},
			"1 test(s) fail that did not fail before: p/TestNew", "did not fail before this work (new tests must pass too):\n\n- p/TestNew\n  new boom"},
		{"exit 0, a new test fails", 0, report(pass("p/TestA"), pass("p/TestB"), pass("p/TestGone"), pass("p/TestOld"), pass("p/TestOld/sub"), fail("p/TestNew", "")),
			nil, guard.StatusFail, func(m state.GuardMeta) []string { return m.NewFailing }, []string{"p/TestNew"}, "p/TestNew", "- p/TestNew"},
		{"a package does not build", 1, withBroken(report(pass("p/TestA"), pass("p/TestB"), pass("p/TestGone"), pass("p/TestOld"), pass("p/TestOld/sub")),
			testreport.Broken{Unit: "r", Reason: testreport.BuildFailed, Message: "r.go:1: syntax error"}, testreport.Broken{Unit: "q", Reason: testreport.BuildFailed}),
			nil, guard.StatusFail, func(m state.GuardMeta) []string { return m.NewBroken }, []string{"r: build failed"},
			"1 unit(s) whose tests could not run: r: build failed", "- r (build failed)\n  r.go:1: syntax error"},
		{"broken as before", 1, withBroken(report(pass("p/TestA"), pass("p/TestB"), pass("p/TestGone"), pass("p/TestOld"), pass("p/TestOld/sub")),
			testreport.Broken{Unit: "q", Reason: testreport.BuildFailed}),
			nil, guard.StatusPass, func(m state.GuardMeta) []string { return m.NewBroken }, nil, "", ""},
		{"a test vanished, one is skipped now", 0, report(pass("p/TestA"), skip("p/TestB"), pass("p/TestOld"), pass("p/TestOld/sub")),
			nil, guard.StatusFail, func(m state.GuardMeta) []string { return m.Vanished }, []string{"p/TestB", "p/TestGone"},
			"2 test(s) that passed before vanished: p/TestB, p/TestGone", "no longer run (vanished"},
		{"the task removes them", 0, report(pass("p/TestA"), pass("p/TestB")),
			[]string{"TestGone", "p/TestOld"}, guard.StatusPass, func(m state.GuardMeta) []string { return m.Vanished }, nil, "", ""},
		{"renamed: vanished and new", 1, report(pass("p/TestA"), pass("p/TestB"), pass("p/TestGone"), pass("p/TestOld"), fail("p/TestOld/renamed", "")),
			nil, guard.StatusFail, func(m state.GuardMeta) []string { return append(m.Vanished, m.NewFailing...) }, []string{"p/TestOld/sub", "p/TestOld/renamed"}, "vanished: p/TestOld/sub", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := guard.Result{Name: "test", ExitCode: tt.exit, Status: guard.StatusPass, Report: tt.rep}
			if tt.exit != 0 {
				res.Status, res.Error = guard.StatusFail, "exited with status 1"
			}
			m, found, lines := judgeGuard(g, res, base, tt.removes)
			if m.Status != tt.status || strings.Join(tt.field(m), ",") != strings.Join(tt.want, ",") || !strings.Contains(m.Error, tt.says) {
				t.Errorf("%+v; want %s, %q, saying %q", m, tt.status, tt.want, tt.says)
			}
			var b strings.Builder
			lines.render(&b)
			if !strings.Contains(b.String(), tt.log) {
				t.Errorf("failure.log block:\n%s\nwant %q", b.String(), tt.log)
			}
			if len(tt.rep.Broken) != len(found.Broken) {
				t.Errorf("found %+v: its broken units not kept for the next baseline", found)
			}
		})
	}
}

func withBroken(r *testreport.Report, units ...testreport.Broken) *testreport.Report {
	for _, b := range units {
		r.AddBroken(b)
	}
	return r
}

func TestRemoved(t *testing.T) {
	for _, tt := range []struct {
		name  string
		entry string
		want  bool
	}{
		{"example.com/calc/TestOld", "TestOld", true},
		{"example.com/calc/TestOld/sub", "TestOld", true},
		{"example.com/calc/TestOldest", "TestOld", false},
		{"example.com/calc/XTestOld", "TestOld", false},
		{"example.com/calc/legacy/TestA", "example.com/calc/legacy", true},
		{"example.com/calc/legacyx/TestA", "example.com/calc/legacy", false},
		{"tests.test_calc.CalcTest.test_old", "test_old", true},
		{"tests.test_calc.CalcTest.test_old", "CalcTest.test_old", true},
		{"tests.test_calc.CalcTest.test_older", "test_old", false},
		{"adds numbers", "adds numbers", true},
		{"adds numbers", "adds", false},
		{"a/TestOld/x/TestOld", "TestOld/x", true},
	} {
		if got := removed(tt.name, []string{tt.entry}); got != tt.want {
			t.Errorf("removed(%q, %q) = %v, want %v", tt.name, tt.entry, got, tt.want)
		}
	}
}

// A check with a report must show no failing test and no broken unit,
// whatever its exit status.
func TestJudgeCheckByReport(t *testing.T) {
	g := config.Guard{Name: "own", Run: "x", Report: "tap"}
	res := guard.Result{Name: "own", Status: guard.StatusPass, Report: report(pass("a"), fail("b", "boom"))}
	if m, _ := judgeCheck(g, res); m.Status != guard.StatusFail || !strings.Contains(m.Error, "exited 0, but its report shows 1 test(s) fail: b") {
		t.Errorf("exit 0 with a failing test: %+v", m)
	}
	res.Report = withBroken(report(pass("a")), testreport.Broken{Unit: testreport.BailOutUnit, Reason: testreport.BailedOut})
	if m, _ := judgeCheck(g, res); m.Status != guard.StatusFail || len(m.NewBroken) != 1 {
		t.Errorf("exit 0 with a Bail out!: %+v", m)
	}
	res.Report = report(pass("a"), skip("c"))
	if m, _ := judgeCheck(g, res); m.Status != guard.StatusPass || m.Tests != 2 || m.Skipped != 1 {
		t.Errorf("a pass: %+v", m)
	}
}

// TestJudgeRunsChecksAfterGuards: the task's checks run after the guards
// and must pass; their failure fails the judgement, and their results
// name the node that carries them.
func TestJudgeRunsChecksAfterGuards(t *testing.T) {
	r := newRoom(t)
	g := Guards{Work: r.work, Grace: time.Second,
		Guards: []config.Guard{{Name: "lint", Run: "true"}},
		Checks: []Check{{Node: "calc", Guard: config.Guard{Name: "own", Run: "test -f done.txt"}}, {Node: "app", Guard: config.Guard{Name: "group", Run: "true"}}}}
	j, err := Judge(context.Background(), g, r.runDir, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Verdict != state.GuardFail || len(j.Results) != 1 || len(j.Checks) != 2 || j.Checks[0].Status != state.GuardFail || j.Checks[0].Node != "calc" || j.Checks[1].Node != "app" {
		t.Fatalf("judgement %+v; want the own check failing", j)
	}
	writeFile(t, filepath.Join(r.work, "done.txt"), "ok\n")
	if j, err = Judge(context.Background(), g, r.runDir, Hooks{}); err != nil || j.Verdict != state.GuardPass {
		t.Fatalf("after the work: %+v, %v; want pass", j, err)
	}
	passing, _, err := Probe(context.Background(), r.work, g.Checks, time.Second, nil, nil, t.TempDir(), Hooks{})
	if err != nil || len(passing) != 2 {
		t.Errorf("Probe = %v, %v; want both checks passing", passing, err)
	}
	os.Remove(filepath.Join(r.work, "done.txt"))
	if passing, _, _ := Probe(context.Background(), r.work, g.Checks, time.Second, nil, nil, t.TempDir(), Hooks{}); len(passing) != 1 || passing[0] != "group" {
		t.Errorf("Probe = %v; want only the check that passes without the work", passing)
	}
}
