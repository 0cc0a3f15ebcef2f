package serve

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

// deadline bounds every wait of these tests.
const deadline = 10 * time.Second

// hostile is text an agent could write to get script into the page or
// to act on what displays it.
const hostile = `<script>window.pwned=1</script><img src=x onerror="window.pwned=2"> \x1b[31m` + "\x1b[2J\u202e"

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// replace writes a file as an editor or the runner does: a new file
// renamed over the old one.
func replace(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".edit-"+filepath.Base(path))
	write(t, tmp, content)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

const fixtureTree = `{"version": 1, "root": {"id": "shop", "title": "Web shop", "children": [
  {"id": "catalog", "title": "Catalog page", "status": "done"},
  {"id": "pay", "title": "Payments", "status": "blocked", "blocked_reason": "Stripe or Adyen? ` + "<script>window.pwned=3</script>" + `"},
  {"id": "cart", "title": "Cart", "attempts": 1}
]}}
`

// repo writes a repository after three iterations: two with their run
// folders, the first pruned (only the journal knows it), and a meta.json
// with the fields a newer runner adds.
func repo(t *testing.T) state.Paths {
	t.Helper()
	p := state.NewPaths(t.TempDir())
	for _, dir := range []string{p.StateDir(), p.RunDir(2), p.RunDir(3)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, p.Config(), "[executor]\npreset = \"command\"\ncommand = [\"true\"]\n")
	write(t, p.Tree(), fixtureTree)
	at := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	rs := &state.RunState{Version: state.RunStateVersion, Iteration: 3, LastNode: "pay", LastStatus: "blocked",
		LastSummary: "Stripe or Adyen?", LastGuard: state.GuardSkipped,
		Usage: state.Usage{InputTokens: 5000, OutputTokens: 900, CostUSD: 0.12, CostSource: state.CostReported}}
	if err := state.SaveRunState(p.RunState(), rs); err != nil {
		t.Fatal(err)
	}
	for _, r := range []state.Record{
		{Time: at, Iteration: 1, Node: "catalog", Event: state.EventStarted},
		{Time: at.Add(90 * time.Second), Iteration: 1, Node: "catalog", Event: state.EventRecorded, Outcome: state.OutcomeDone, Summary: "catalog done"},
		{Time: at.Add(2 * time.Minute), Iteration: 2, Node: "cart", Event: state.EventStarted},
		{Time: at.Add(3 * time.Minute), Iteration: 2, Node: "cart", Event: state.EventRecorded, Outcome: state.OutcomeGuardFailed},
		{Time: at.Add(4 * time.Minute), Iteration: 3, Node: "pay", Event: state.EventStarted},
		{Time: at.Add(5 * time.Minute), Iteration: 3, Node: "pay", Event: state.EventRecorded, Outcome: state.OutcomeBlocked},
	} {
		if err := state.AppendJournal(p.Journal(), r); err != nil {
			t.Fatal(err)
		}
	}
	done := at.Add(3 * time.Minute)
	if err := state.SaveMetaAs(p.RunDir(2), &state.Meta{Iteration: 2, Node: "cart", NodePath: "shop/cart", Attempt: 1, MaxAttempts: 3,
		Phase: state.PhaseRecorded, StartedAt: at.Add(2 * time.Minute), FinishedAt: &done, DurationMS: 60_000,
		AgentStatus: "done", Summary: "cart written\n" + hostile, Guard: state.GuardFail, Outcome: state.OutcomeGuardFailed,
		Guards: []state.GuardMeta{{Name: "test", ExitCode: 1, DurationMS: 1200, Status: "fail"}},
		Usage:  &state.Usage{InputTokens: 2000, OutputTokens: 400, CostUSD: 0.05, CostSource: state.CostReported}}, fsutil.NotSynced); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(p.RunDir(2), "prompt.md"), "# Goal\n"+hostile+"\n")
	write(t, filepath.Join(p.RunDir(2), "guard.log"), "FAIL cart_test.go:12\n")
	// Iteration 3's meta.json as the git work will write it: fields this
	// runner's state.Meta does not know.
	write(t, state.MetaFile(p.RunDir(3)), `{"iteration": 3, "node": "pay", "node_path": "shop/pay", "attempt": 1, "max_attempts": 3,
  "phase": "recorded", "started_at": "2026-03-01T02:04:00Z", "duration_ms": 61000, "outcome": "blocked",
  "summary": "Stripe or Adyen?", "executor": "claude", "rung": {"n": 2, "of": 2, "executor": "claude"}, "attempts": 0,
  "checkpoint": {"commit": "0123456789abcdef0123456789abcdef01234567", "branch": "runner/shop", "diffstat": " pay.go | 12 ++++\n 1 file changed"},
  "attempt_ref": "refs/runner/attempts/3", "review": {"verdict": "approve"}}
`)
	write(t, filepath.Join(p.RunDir(3), "executor.log"), strings.Repeat("a line the agent printed, over and over\n", 30000)+"the last line\n")
	write(t, p.Questions(), "# Open Questions\n\n- [iteration 3, node pay] Stripe or Adyen?\n")
	return p
}

// server serves the dashboard of p over a loopback test server.
func server(t *testing.T, p state.Paths, token string, recheck time.Duration) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(Options{Paths: p, Token: token, Recheck: recheck})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		s.Close() // ends the event streams, so that the server can close
		ts.Close()
	})
	return s, ts
}

// get makes a request with the given headers.
func get(t *testing.T, method, url string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{Timeout: deadline, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
