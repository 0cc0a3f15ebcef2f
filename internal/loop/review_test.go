package loop

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// reviewerScript is a shell reviewer: its nth run (counted in
// $RUNNER_DIR/review-runs, outside the work it may not change) runs case
// n of cases, or the "*" case. $OUT is its output file.
func reviewerScript(cases string) string {
	return `n=$(cat "$RUNNER_DIR/review-runs" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$RUNNER_DIR/review-runs"; OUT="$RUNNER_OUTPUT_FILE"; cat >/dev/null
case $n in
` + cases + `
esac`
}

const approve = `echo '{"verdict":"approve","reasons":[]}' > "$OUT"`

// reviewRepo is agentRepo with a [review] running the shell reviewer.
func reviewRepo(t *testing.T, agent, reviewer, loopConf, reviewConf string) state.Paths {
	t.Helper()
	p := agentRepo(t, agent, loopConf)
	cmd, _ := json.Marshal([]string{"sh", "-c", reviewer})
	conf, err := os.ReadFile(p.Config())
	if err != nil {
		t.Fatal(err)
	}
	conf = append(conf, []byte("\n[review]\nname = \"reviewer\"\npreset = \"command\"\ncommand = "+string(cmd)+"\ntimeout = \"1m\"\nkill_grace = \"1s\"\n"+reviewConf)...)
	if err := os.WriteFile(p.Config(), conf, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func reviewRuns(t *testing.T, p state.Paths) string {
	data, _ := os.ReadFile(filepath.Join(p.Dir, "review-runs"))
	return strings.TrimSpace(string(data))
}

// TestReviewerRateLimitIsWaitedOut: a reviewer's usage limit is waited
// out (its backoff) and asked again; it is no failure of the reviewer.
func TestReviewerRateLimitIsWaitedOut(t *testing.T) {
	limited := `echo "Error: 429 Too Many Requests" >&2; exit 1;;`
	p := reviewRepo(t, countingAgent(`*) `+doneMessage+`;;`), reviewerScript(`1|2) `+limited+`
*) `+approve+`;;`), fastBackoff+"max_consecutive_errors = 1\n", "")
	var progress syncBuffer
	res, err := runBounded(t, context.Background(), p, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if res.Reason != Complete {
		t.Fatalf("run ended with %v: %s", res.Reason, res.Message)
	}
	m := loadMeta(t, p, 1)
	if m.Review == nil || m.Review.Verdict != state.VerdictApprove || m.Review.Asked != 3 || len(m.Review.Failures) != 2 {
		t.Fatalf("review %+v, want approve after 3 runs, 2 failures", m.Review)
	}
	for _, want := range []string{"review: waiting 10ms", "review: waiting 20ms", "review: approve → done"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.String())
		}
	}
}

// TestRecordedVerdictIsNotAskedAgain: a runner that died after the
// verdict was durable (meta.json in phase reviewed) but before the
// in-flight marker moved: the next one records the verdict, never asks
// the reviewer again, and counts its usage once.
func TestRecordedVerdictIsNotAskedAgain(t *testing.T) {
	p := reviewRepo(t, countingAgent(`*) `+doneMessage+`;;`), reviewerScript(`*) `+approve+`;;`), "", "")
	tr, err := tree.Load(p.Tree())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range tr.Root.Children[1:] {
		n.Status = tree.StatusDone // nothing runs after the resume
	}
	if err := tree.Save(p.Tree(), tr); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{p.RunDir(1), p.StateDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now().UTC().Add(-time.Minute)
	msg, _ := json.Marshal(map[string]string{"status": "done", "summary": "did a"})
	usage := &state.Usage{InputTokens: 100, OutputTokens: 10, CostUSD: 0.25, CostSource: state.CostReported}
	meta := &state.Meta{Iteration: 1, Node: "a", NodePath: "app/a", Attempt: 1, MaxAttempts: 3,
		Phase: state.PhaseReviewed, StartedAt: start, Agent: &state.AgentMeta{Class: executor.ClassOK}, AgentStatus: "done",
		Guard: state.GuardPass, Message: msg, Executor: "command",
		Review: &state.ReviewMeta{Verdict: state.VerdictReject, Reasons: []string{"no tests"}, Executor: "reviewer", Usage: usage, Rejection: 1}}
	if err := state.SaveMeta(p.RunDir(1), meta); err != nil {
		t.Fatal(err)
	}
	// The guards' verdict as the runner journaled it (the review comes
	// after it; see TestForgedMetaIsNotAResult).
	for _, rec := range []state.Record{
		{Iteration: 1, Node: "a", Event: state.EventStarted},
		{Iteration: 1, Node: "a", Event: state.EventGuardsDone, Phase: state.PhaseGuardsDone, Digest: state.VerdictDigest(meta)},
	} {
		if err := state.AppendJournal(p.Journal(), rec); err != nil {
			t.Fatal(err)
		}
	}
	rs := &state.RunState{InFlight: &state.InFlight{Iteration: 1, Node: "a", Phase: state.PhaseReviewing, StartedAt: start}}
	if err := state.SaveRunState(p.RunState(), rs); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), Options{Paths: p, MaxIterations: 1, Once: true}); err != nil {
		t.Fatal(err)
	}
	if got := reviewRuns(t, p); got != "1" {
		t.Fatalf("the reviewer ran %q times, want once (for iteration 2)", got)
	}
	m := loadMeta(t, p, 1)
	if m.Outcome != state.OutcomeRejected || m.Phase != state.PhaseRecorded {
		t.Fatalf("iteration 1: outcome %s, phase %s; want rejected, recorded", m.Outcome, m.Phase)
	}
	failure, err := os.ReadFile(filepath.Join(p.RunDir(1), "failure.log"))
	if err != nil || !strings.Contains(string(failure), "- no tests") {
		t.Errorf("failure.log = %q, %v", failure, err)
	}
	if prompt, _ := os.ReadFile(filepath.Join(p.RunDir(2), "prompt.md")); !strings.Contains(string(prompt), "# Failure") || !strings.Contains(string(prompt), "- no tests") {
		t.Errorf("the next attempt's prompt does not carry the reasons:\n%s", prompt)
	}
	if got := loadRunState(t, p); got.UsageByExecutor["reviewer (review)"].CostUSD != 0.25 || got.Usage.CostUSD != 0.25 {
		t.Errorf("run state usage %+v, by executor %+v; want the verdict's $0.25 once", got.Usage, got.UsageByExecutor)
	}
	// Iteration 2 (the --once iteration) reviewed a again; the first
	// verdict counted once.
	if m2 := loadMeta(t, p, 2); m2.Review == nil || m2.Review.Verdict != state.VerdictApprove {
		t.Errorf("iteration 2 review %+v", m2.Review)
	}
	if n := len(events(t, p, state.EventRejected)); n != 1 {
		t.Errorf("%d rejected records, want 1", n)
	}
}
