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

// TestJudgeGuardAgainstBaseline: a guard with a report fails only by
// regression; without a report or a baseline, by its exit status.
func TestJudgeGuardAgainstBaseline(t *testing.T) {
	g := config.Guard{Name: "test", Run: "go test -json ./...", Report: "go-json"}
	base := &state.BaselineGuard{Name: "test", Report: "go-json", Passing: []string{"p/TestKeep", "p/TestWrap"}, Failing: []string{"p/TestOld"}}
	base2 := *base
	failed := guard.Result{Name: "test", ExitCode: 1, Status: guard.StatusFail, Error: "exited with status 1"}
	passed := guard.Result{Name: "test", Status: guard.StatusPass}

	// The old failure still fails, nothing regressed: pass, with a note.
	res := failed
	res.Report = report(testreport.Test{Name: "p/TestKeep", Status: "pass"}, testreport.Test{Name: "p/TestWrap", Status: "pass"},
		testreport.Test{Name: "p/TestOld", Status: "fail", Message: "old"}, testreport.Test{Name: "p/TestNew", Status: "fail"})
	m, found, _ := judgeGuard(g, res, base)
	if m.Status != guard.StatusPass || m.Error != "" || !strings.Contains(m.Note, "exit 1: 2 test(s) fail as they did before") {
		t.Errorf("no regression: %+v; want pass with a note", m)
	}
	if m.Tests != 4 || m.Failed != 2 || found.Passed || len(found.Passing) != 2 || len(found.Failing) != 2 {
		t.Errorf("counts %+v, found %+v", m, found)
	}

	// A test that passed fails now: fail, named, with its message.
	res = failed
	res.Report = report(testreport.Test{Name: "p/TestKeep", Status: "pass"}, testreport.Test{Name: "p/TestWrap", Status: "fail", Message: "wrap(ab) = [ab]"},
		testreport.Test{Name: "p/TestOld", Status: "fail"})
	m, _, lines := judgeGuard(g, res, &base2)
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
	res.Report = report(testreport.Test{Name: "p/TestKeep", Status: "pass"})
	if m, _, _ := judgeGuard(g, res, &base3); m.Status != guard.StatusFail {
		t.Errorf("a failure with no failing test, after a pass: %+v; want fail", m)
	}

	// A timeout fails whatever the report says.
	res = guard.Result{Name: "test", ExitCode: -1, Status: guard.StatusTimeout, Error: "timed out", Report: report(testreport.Test{Name: "p/TestKeep", Status: "pass"})}
	if m, _, _ := judgeGuard(g, res, base); m.Status != guard.StatusTimeout {
		t.Errorf("timeout: %+v", m)
	}

	// No baseline, or a report that could not be read: the exit status.
	res = failed
	res.Report = report(testreport.Test{Name: "p/TestOld", Status: "fail"})
	if m, _, _ := judgeGuard(g, res, nil); m.Status != guard.StatusFail {
		t.Errorf("no baseline: %+v; want fail", m)
	}
	res = failed
	res.ReportErr = testreport.ErrMalformed
	if m, _, _ := judgeGuard(g, res, base); m.Status != guard.StatusFail || m.ReportError == "" {
		t.Errorf("unreadable report: %+v; want fail, the reason kept", m)
	}
	if m, _, _ := judgeGuard(g, passed, base); m.Status != guard.StatusPass {
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
	passing, err := Probe(context.Background(), r.work, g.Checks, time.Second, nil, nil, t.TempDir(), Hooks{})
	if err != nil || len(passing) != 2 {
		t.Errorf("Probe = %v, %v; want both checks passing", passing, err)
	}
	os.Remove(filepath.Join(r.work, "done.txt"))
	if passing, _ := Probe(context.Background(), r.work, g.Checks, time.Second, nil, nil, t.TempDir(), Hooks{}); len(passing) != 1 || passing[0] != "group" {
		t.Errorf("Probe = %v; want only the check that passes without the work", passing)
	}
}
