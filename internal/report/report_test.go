package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// t0 is when the fixture's first run started.
var t0 = time.Date(2026, 3, 1, 21, 0, 0, 0, time.UTC)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

func usage(in, out int64, cost float64) *state.Usage {
	u := &state.Usage{InputTokens: in, OutputTokens: out, CostUSD: cost}
	if cost > 0 {
		u.CostSource = state.CostReported
	}
	return u
}

func rawJSON(v any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

// night is a repository after a night: an earlier run (iteration 1), then
// a run that did iterations 2 to 12 and left 13 unfinished, with an
// example of everything a report shows.
func night(t *testing.T) state.Paths {
	t.Helper()
	p := state.NewPaths(filepath.Join(t.TempDir(), "calc"))
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, p.Config(), "[executor]\npreset = \"command\"\ncommand = [\"true\"]\n")
	write(t, p.Tree(), `{"version": 1, "root": {"id": "calc", "title": "Calculator", "children": [
  {"id": "parse", "title": "Parse arguments", "status": "done"},
  {"id": "ops", "title": "Operations", "status": "blocked", "blocked_reason": "Which database: Postgres or SQLite?\u001b[2J"},
  {"id": "docs", "title": "Docs", "attempts": 3, "max_attempts": 5, "checks": [{"name": "docs-tests", "run": "prove t/docs.t", "report": "tap"}]},
  {"id": "fmt", "title": "Formatting", "children": [
    {"id": "fmt-int", "title": "Integers", "attempts": 2},
    {"id": "fmt-float", "title": "Floats"}
  ]},
  {"id": "cli", "title": "Command line", "status": "blocked", "attempts": 3, "blocked_reason": "attempts exhausted"},
  {"id": "lint", "title": "Lint", "status": "done"}
]}}
`)
	rs := &state.RunState{Version: state.RunStateVersion, Iteration: 12, LastNode: "fmt-int", LastStatus: "done", LastGuard: state.GuardFail,
		Usage:  state.Usage{InputTokens: 99000, OutputTokens: 9000, CostUSD: 1.5, CostSource: state.CostReported},
		Branch: "runner/calc", Checkpoint: "0123456789abcdef0123456789abcdef01234567"}
	// The guards' tests: 4 passed at the run's preflight, 9 of 12 pass on
	// the run branch now, and a package does not build.
	four := 4
	rs.Preflight = &state.Preflight{Commit: rs.Checkpoint, Guards: "digest", At: at(0), Passing: &four}
	if err := state.SaveRunState(p.RunState(), rs); err != nil {
		t.Fatal(err)
	}
	b := &state.Baseline{Key: rs.Checkpoint, Guards: "digest", At: at(100), From: "iteration 2", Results: []state.BaselineGuard{{Name: "test", Report: "go-json",
		Passing: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}, Failing: []string{"x", "y", "z"}, Broken: []state.BrokenUnit{{Unit: "example.com/calc/legacy", Reason: "build failed"}}}}}
	if err := state.SaveBaseline(p, b); err != nil {
		t.Fatal(err)
	}

	guardFail := []state.GuardMeta{{Name: "test", ExitCode: 1, DurationMS: 900, Status: "fail"}}
	metas := []*state.Meta{
		{Iteration: 1, Node: "parse", NodePath: "calc/parse", Attempt: 1, MaxAttempts: 3, Outcome: state.OutcomeExecutorError,
			Agent: &state.AgentMeta{Class: "agent_error", Error: "agent exited with status 1"}},
		{Iteration: 2, Node: "parse", NodePath: "calc/parse", Attempt: 2, MaxAttempts: 3, Outcome: state.OutcomeDone, NodeStatus: "done",
			Summary: "Parser written.\nDetails follow.", Executor: "claude", Usage: usage(10000, 1000, 0.10),
			Checkpoint: &state.CheckpointMeta{Commit: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", Branch: "runner/calc",
				Diffstat: " parse.go | 40 ++++\n 1 file changed, 40 insertions(+)\n create mode 100644 parse.go\n"},
			Review: &state.ReviewMeta{Verdict: "approve", Executor: "codex", Usage: usage(2000, 100, 0)}},
		{Iteration: 3, Node: "ops", NodePath: "calc/ops", Attempt: 1, MaxAttempts: 3, Outcome: state.OutcomeGuardFailed, NodeStatus: "open",
			Guards: guardFail, Executor: "claude", Usage: usage(20000, 2000, 0.20), AttemptRef: "refs/runner/attempts/3",
			Tamper: []state.TamperMeta{{Path: "tests/ops_test.go", Change: "modified", Kept: "tamper/tests/ops_test.go"}}},
		{Iteration: 4, Node: "ops", NodePath: "calc/ops", Attempt: 2, MaxAttempts: 3, Outcome: state.OutcomeBlocked, NodeStatus: "blocked",
			Summary: "Which database: Postgres or SQLite?", Executor: "codex", Usage: usage(5000, 500, 0),
			Message: rawJSON(map[string]any{"status": "blocked", "summary": "Which database: Postgres or SQLite?",
				"questions": []string{"Is SQLite fine for the tests?\u001b]52;c;aGk=\u0007"}})},
		{Iteration: 5, Node: "docs", NodePath: "calc/docs", Attempt: 1, MaxAttempts: 5, Outcome: state.OutcomeRetry, NodeStatus: "open",
			Summary: "Half of the docs written.\nThe rest next time.", Executor: "claude", Usage: usage(3000, 300, 0.03)},
		{Iteration: 6, Node: "docs", NodePath: "calc/docs", Attempt: 2, MaxAttempts: 5, Outcome: state.OutcomeExecutorError, NodeStatus: "open",
			Executor: "claude", Agent: &state.AgentMeta{Class: "timeout", Error: "the agent timed out after 30m0s; last lines of executor.log:\n..."}},
		{Iteration: 7, Node: "fmt", NodePath: "calc/fmt", Attempt: 1, MaxAttempts: 3, Outcome: state.OutcomeDecomposed, NodeStatus: "open",
			Executor: "claude", Message: rawJSON(map[string]any{"status": "decomposed", "summary": "split",
				"children": []map[string]string{{"id": "fmt-int", "title": "Integers"}, {"id": "fmt-float", "title": "Floats"}}})},
		{Iteration: 8, Node: "cli", NodePath: "calc/cli", Attempt: 3, MaxAttempts: 3, Outcome: state.OutcomeGuardFailed, NodeStatus: "blocked",
			Executor: "claude", Review: &state.ReviewMeta{Verdict: "reject", Reasons: []string{"the flags are not documented", "no test of -h"}, Executor: "codex"}},
		{Iteration: 9, Node: "fmt-int", NodePath: "calc/fmt/fmt-int", Attempt: 1, MaxAttempts: 3, Outcome: state.OutcomeInterrupted, NodeStatus: "open",
			Summary: "Iteration 9 was interrupted before it finished (the run was interrupted by a signal while the agent was working). The working tree may hold partial changes."},
		{Iteration: 10, Node: "fmt-float", NodePath: "calc/fmt/fmt-float", Attempt: 1, MaxAttempts: 3, Phase: state.PhaseAborted,
			Note: "`runner stop` was asked while the run waited out a usage or rate limit; no attempt was spent"},
		// 11: pruned; the journal says what happened.
		{Iteration: 12, Node: "fmt-int", NodePath: "calc/fmt/fmt-int", Attempt: 2, MaxAttempts: 3, Outcome: state.OutcomeGuardFailed, NodeStatus: "open",
			Guards: guardFail, Executor: "claude", Conflict: &state.ConflictMeta{Kind: "conflict", Files: []string{"format.go"}, Onto: "0123456789abcdef"}},
	}
	for _, m := range metas {
		if m.Phase == "" {
			m.Phase = state.PhaseRecorded
		}
		m.StartedAt = at(m.Iteration * 10)
		if err := os.MkdirAll(p.RunDir(m.Iteration), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := state.SaveMetaAs(p.RunDir(m.Iteration), m, fsutil.NotSynced); err != nil {
			t.Fatal(err)
		}
	}

	recs := []state.Record{
		{Time: at(0), Event: state.EventRunStarted, RunnerPID: 100},
		{Time: at(1), Iteration: 1, Node: "parse", Event: state.EventStarted, RunnerPID: 100},
		{Time: at(2), Iteration: 1, Node: "parse", Event: state.EventRecorded, Outcome: state.OutcomeExecutorError},
		{Time: at(15), Event: state.EventRunStarted, RunnerPID: 200},
	}
	// Iteration 11's folder was pruned: only the journal knows it.
	pruned := []state.Record{
		{Time: at(110), Iteration: 11, Node: "docs", Event: state.EventStarted, RunnerPID: 200},
		{Time: at(111), Iteration: 11, Node: "docs", Event: state.EventAgentDone, Executor: "claude", Usage: usage(1000, 100, 0.01)},
		{Time: at(112), Iteration: 11, Node: "docs", Event: state.EventTamper, Paths: []string{".runner/tree.json"}},
		{Time: at(113), Iteration: 11, Node: "docs", Event: state.EventRecorded, Outcome: state.OutcomeGuardFailed, NodeStatus: "open"},
		{Time: at(114), Node: "lint", Event: state.EventSkipped},
	}
	for _, m := range metas[1:] {
		n := m.Iteration
		recs = append(recs, state.Record{Time: at(n * 10), Iteration: n, Node: m.Node, Event: state.EventStarted, RunnerPID: 200})
		switch {
		case n == 5:
			recs = append(recs, state.Record{Time: at(n*10 + 1), Iteration: n, Node: m.Node, Event: state.EventRateLimited, WaitMS: 90 * 60 * 1000})
		case n == 10:
			recs = append(recs, state.Record{Time: at(n*10 + 1), Iteration: n, Node: m.Node, Event: state.EventRateLimited, WaitMS: 30 * 60 * 1000},
				state.Record{Time: at(n*10 + 2), Iteration: n, Node: m.Node, Event: state.EventAborted, Error: m.Note})
			recs = append(recs, pruned...)
			continue
		}
		ev := state.EventRecorded
		if m.Outcome == state.OutcomeInterrupted {
			ev = state.EventInterrupted
		}
		rec := state.Record{Time: at(n*10 + 5), Iteration: n, Node: m.Node, Event: ev, Outcome: m.Outcome, NodeStatus: m.NodeStatus}
		switch n {
		case 5: // docs' checks before its first attempt: none of 4 passing
			rec.ChecksBefore = &state.TestTally{Total: 4}
		case 6: // and at its last iteration that ran them
			rec.Checks = &state.TestTally{Passing: 2, Total: 4}
		}
		recs = append(recs, rec)
	}
	recs = append(recs, state.Record{Time: at(130), Iteration: 13, Node: "fmt-int", Event: state.EventStarted, RunnerPID: 200})
	for _, r := range recs {
		if err := state.AppendJournal(p.Journal(), r); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func load(t *testing.T, p state.Paths, since Since) *Report {
	t.Helper()
	rep, err := Load(p, since)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// golden compares got, the fixture's root replaced by $ROOT, with the
// file testdata/name; -update rewrites it.
func golden(t *testing.T, p state.Paths, name string, got []byte) {
	t.Helper()
	got = bytes.ReplaceAll(got, []byte(p.Root), []byte("$ROOT"))
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, path, string(got))
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the report differs from %s (go test -update rewrites it):\n%s", path, got)
	}
}

func TestLastRun(t *testing.T) {
	p := night(t)
	rep := load(t, p, LastRun)
	w := rep.Window
	if w.Kind != KindRun || w.RunnerPID != 200 || w.First != 2 || w.Last != 13 || w.Iterations != 12 || !w.From.Equal(at(15)) {
		t.Errorf("window %+v; want the run of pid 200 from %s: iterations 2 to 13", w, at(15))
	}
	var done []int
	for _, d := range rep.Done {
		done = append(done, d.Iteration)
	}
	if !reflect.DeepEqual(done, []int{2}) || rep.Done[0].Commit == "" || rep.Done[0].Diffstat != "1 file changed, 40 insertions(+)" {
		t.Errorf("done %+v; want iteration 2 with its commit and diffstat", rep.Done)
	}
	reasons := map[int]string{}
	for _, f := range rep.Failed {
		reasons[f.Iteration] = f.Reason
	}
	for n, want := range map[int]string{
		3:  "the agent changed files it may not change: tests/ops_test.go",
		5:  "the agent asked for another attempt: Half of the docs written.",
		6:  "the agent timed out after 30m0s",
		8:  "the review rejected it: the flags are not documented; no test of -h (attempts exhausted: the task is blocked)",
		11: "a guard failed",
		12: "its commit conflicted with the run branch: format.go",
	} {
		if reasons[n] != want {
			t.Errorf("failure of iteration %d: %q; want %q", n, reasons[n], want)
		}
	}
	if _, ok := reasons[1]; ok || len(rep.Failed) != 6 {
		t.Errorf("failed %+v; want the six of the last run, not iteration 1 of the run before", rep.Failed)
	}
	if len(rep.Blocked) != 2 {
		t.Fatalf("blocked %+v; want ops and cli", rep.Blocked)
	}
	ops := rep.Blocked[0]
	if ops.Path != "calc/ops" || ops.Iteration != 4 || len(ops.Questions) != 1 ||
		!reflect.DeepEqual(ops.Commands, []string{`runner answer ops "your answer"`, "runner skip ops"}) {
		t.Errorf("blocked ops %+v; want its question from iteration 4 and the commands to go on", ops)
	}
	if cli := rep.Blocked[1]; cli.Reason != "attempts exhausted" || cli.Iteration != 8 || cli.Commands[0] != "runner reset cli" {
		t.Errorf("blocked cli %+v; want attempts exhausted in iteration 8", cli)
	}
	kinds := map[int]string{}
	for _, in := range rep.Interrupted {
		kinds[in.Iteration] = in.Kind
	}
	if !reflect.DeepEqual(kinds, map[int]string{9: Interrupted, 10: SetAside, 13: Unfinished}) {
		t.Errorf("interrupted %+v", rep.Interrupted)
	}
	if rep.Interrupted[0].Reason != "the run was interrupted by a signal while the agent was working" {
		t.Errorf("interruption reason %q", rep.Interrupted[0].Reason)
	}
	var anomalies []string
	for _, a := range rep.Anomalies {
		anomalies = append(anomalies, a.Kind)
	}
	if want := []string{AnomalyTamper, AnomalyReviewRejected, AnomalyTamper, AnomalyTaskSkipped, AnomalyConflict}; !reflect.DeepEqual(anomalies, want) {
		t.Errorf("anomalies %v; want %v", anomalies, want)
	}
	if len(rep.Decomposed) != 1 || !reflect.DeepEqual(rep.Decomposed[0].Children, []string{"fmt-int", "fmt-float"}) {
		t.Errorf("decomposed %+v", rep.Decomposed)
	}
	if rep.RateLimits != (RateLimits{Waits: 2, WaitedMS: 2 * 60 * 60 * 1000}) {
		t.Errorf("rate limits %+v; want 2 waits, 2h", rep.RateLimits)
	}
	u := rep.Usage
	if u.Total.InputTokens != 41000 || u.Total.OutputTokens != 4000 || u.AllRuns.CostUSD != 1.5 {
		t.Errorf("usage %+v", u)
	}
	names := map[string]int64{}
	for _, e := range u.Executors {
		names[e.Name] = e.Usage.InputTokens
	}
	if !reflect.DeepEqual(names, map[string]int64{"": 0, "claude": 34000, "codex": 5000, "codex (review)": 2000}) {
		t.Errorf("usage per executor %+v", u.Executors)
	}
}

func TestGoldenText(t *testing.T) {
	local := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = local })
	p := night(t)
	var b bytes.Buffer
	if err := WriteText(&b, load(t, p, LastRun)); err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(b.Bytes(), "\x1b\x07") {
		t.Errorf("the text report carries control characters from the agent:\n%q", b.String())
	}
	golden(t, p, "night.golden.md", b.Bytes())
}

func TestGoldenJSON(t *testing.T) {
	p := night(t)
	var b bytes.Buffer
	if err := WriteJSON(&b, load(t, p, LastRun)); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	golden(t, p, "night.golden.json", b.Bytes())
}

func TestWindows(t *testing.T) {
	p := night(t)
	for _, tt := range []struct {
		since       Since
		first, last int
	}{
		{Since{Kind: KindIteration, Iteration: 1}, 1, 13},
		{Since{Kind: KindIteration, Iteration: 9}, 9, 13},
		{Since{Kind: KindTime, Time: at(100)}, 10, 13},
		{Since{Kind: KindTime, Time: at(1000)}, 0, 0},
	} {
		w := load(t, p, tt.since).Window
		if w.First != tt.first || w.Last != tt.last {
			t.Errorf("since %+v: iterations %d to %d; want %d to %d", tt.since, w.First, w.Last, tt.first, tt.last)
		}
	}
	// A run that did nothing is not the one reported: the one before is.
	if err := state.AppendJournal(p.Journal(), state.Record{Time: at(200), Event: state.EventRunStarted, RunnerPID: 300}); err != nil {
		t.Fatal(err)
	}
	if w := load(t, p, LastRun).Window; w.RunnerPID != 200 || w.First != 2 {
		t.Errorf("window %+v; want the run of pid 200", w)
	}
}

func TestRunWithoutRunStartedRecords(t *testing.T) {
	p := state.NewPaths(t.TempDir())
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, p.Config(), "[executor]\npreset = \"command\"\ncommand = [\"true\"]\n")
	write(t, p.Tree(), `{"version": 1, "root": {"id": "a", "title": "A"}}`)
	for _, r := range []state.Record{
		{Time: at(1), Iteration: 1, Node: "a", Event: state.EventStarted, RunnerPID: 7},
		{Time: at(2), Iteration: 1, Node: "a", Event: state.EventRecorded, Outcome: state.OutcomeRetry},
		{Time: at(3), Iteration: 2, Node: "a", Event: state.EventStarted, RunnerPID: 8},
		{Time: at(4), Iteration: 2, Node: "a", Event: state.EventRecorded, Outcome: state.OutcomeRetry},
		{Time: at(5), Iteration: 3, Node: "a", Event: state.EventStarted, RunnerPID: 8},
		{Time: at(6), Iteration: 3, Node: "a", Event: state.EventRecorded, Outcome: state.OutcomeRetry},
	} {
		if err := state.AppendJournal(p.Journal(), r); err != nil {
			t.Fatal(err)
		}
	}
	if w := load(t, p, LastRun).Window; w.First != 2 || w.Last != 3 || w.RunnerPID != 8 {
		t.Errorf("window %+v; want iterations 2 and 3, of the runner with pid 8", w)
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 3, 2, 7, 30, 0, 0, time.UTC)
	for _, tt := range []struct {
		in   string
		want Since
		err  string
	}{
		{"", Night(now), ""},
		{"night", Night(now), ""},
		{"run", LastRun, ""},
		{"42", Since{Kind: KindIteration, Iteration: 42}, ""},
		{"0", Since{}, "iterations are numbered from 1"},
		{"8h", Since{Kind: KindTime, Time: now.Add(-8 * time.Hour)}, ""},
		{"2026-03-01T22:00:00Z", Since{Kind: KindTime, Time: time.Date(2026, 3, 1, 22, 0, 0, 0, time.UTC)}, ""},
		{"2026-03-01 22:00", Since{Kind: KindTime, Time: time.Date(2026, 3, 1, 22, 0, 0, 0, time.UTC)}, ""},
		{"2026-03-01", Since{Kind: KindTime, Time: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}, ""},
		{"06:00", Since{Kind: KindTime, Time: time.Date(2026, 3, 2, 6, 0, 0, 0, time.UTC)}, ""},
		{"22:00", Since{Kind: KindTime, Time: time.Date(2026, 3, 1, 22, 0, 0, 0, time.UTC)}, ""},
		{"yesterday", Since{}, "want an iteration number (42), how long ago (8h, 90m), or a time"},
		{"-8h", Since{}, "want an iteration number"},
	} {
		got, err := ParseSince(tt.in, now)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseSince(%q) error %v; want one saying %q", tt.in, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("ParseSince(%q): %v", tt.in, err)
		case tt.err == "" && (got.Kind != tt.want.Kind || got.Iteration != tt.want.Iteration || !got.Time.Equal(tt.want.Time)):
			t.Errorf("ParseSince(%q) = %+v; want %+v", tt.in, got, tt.want)
		}
	}
}

// TestNightWindow: without --since the report covers every run that ended
// in the last 24 hours, and the one in progress; a run that ended before
// is left out, and so is one that worked on no iteration. With none in
// the span it falls back to the last run.
func TestNightWindow(t *testing.T) {
	now := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return now.Add(time.Duration(-h) * time.Hour) }
	recs := []state.Record{
		{Time: at(30), Event: state.EventRunStarted, RunnerPID: 1},
		{Time: at(29), Iteration: 1, Node: "a", Event: state.EventStarted},
		{Time: at(26), Iteration: 1, Node: "a", Event: state.EventRecorded},
		{Time: at(20), Event: state.EventRunStarted, RunnerPID: 2},
		{Time: at(19), Iteration: 2, Node: "b", Event: state.EventStarted},
		{Time: at(18), Iteration: 2, Node: "b", Event: state.EventRecorded},
		{Time: at(10), Event: state.EventRunStarted, RunnerPID: 3}, // found nothing to do
		{Time: at(2), Event: state.EventRunStarted, RunnerPID: 4},
		{Time: at(1), Iteration: 3, Node: "c", Event: state.EventStarted},
	}
	var w Window
	got := window(recs, Night(now), &w)
	if len(got) != 6 || got[0].RunnerPID != 2 || w.Kind != KindNight || w.Runs != 2 || !w.From.Equal(at(20)) {
		t.Fatalf("night window: %d records from %+v, window %+v; want runs 2 and 4, from the second run's start", len(got), got[0], w)
	}
	if line := windowLine(w); !strings.HasPrefix(line, "The last 24 hours: 2 runs, from ") {
		t.Errorf("window line %q", line)
	}
	var old Window
	if got := window(recs[:3], Night(now), &old); len(got) != 3 || old.Kind != KindRun || old.RunnerPID != 1 {
		t.Errorf("no run in the last 24 hours: %d records, window %+v; want the last run", len(got), old)
	}
}
