package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// agentTree has three independent tasks.
const agentTree = `{"version": 1, "root": {"id": "app", "title": "App", "children": [
  {"id": "a", "title": "A"}, {"id": "b", "title": "B"}, {"id": "c", "title": "C"}
]}}
`

// countingAgent is a shell agent: its nth run (n counted in the file
// "runs" in the repository) runs case n of script, or the "*" case.
// $OUT is the output file.
func countingAgent(cases string) string {
	return `n=$(cat runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs; OUT="$RUNNER_OUTPUT_FILE"; cat >/dev/null
case $n in
` + cases + `
esac`
}

const doneMessage = `echo '{"status":"done","summary":"did it"}' > "$OUT"`

// syncBuffer is a bytes.Buffer safe for the runner writing and the test
// reading at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// agentRepo makes a repository whose agent is the shell script, with the
// extra [loop] lines, and returns its paths.
func agentRepo(t *testing.T, script, loopConf string) state.Paths {
	t.Helper()
	dir := t.TempDir()
	p := state.NewPaths(dir)
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd, _ := json.Marshal([]string{"sh", "-c", script})
	conf := "[executor]\npreset = \"command\"\ncommand = " + string(cmd) + "\ntimeout = \"1m\"\nkill_grace = \"1s\"\n\n[loop]\n" + loopConf
	if err := os.WriteFile(p.Config(), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.Tree(), []byte(agentTree), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type runOutcome struct {
	res *Result
	err error
}

// runBounded runs the loop, failing the test when it takes over a minute.
func runBounded(t *testing.T, ctx context.Context, p state.Paths, progress *syncBuffer) (*Result, error) {
	t.Helper()
	done := make(chan runOutcome, 1)
	go func() {
		res, err := Run(ctx, Options{Paths: p, Progress: progress})
		done <- runOutcome{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(time.Minute):
		t.Fatal("the run did not end within a minute")
		return nil, nil
	}
}

// mustComplete fails the test unless a run ended without an error, its
// tree complete.
func mustComplete(t *testing.T, res *Result, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != Complete {
		t.Fatalf("run ended with %v: %s", res.Reason, res.Message)
	}
}
func loadMeta(t *testing.T, p state.Paths, n int) *state.Meta {
	t.Helper()
	m, err := state.LoadMeta(p.RunDir(n))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func loadRunState(t *testing.T, p state.Paths) *state.RunState {
	t.Helper()
	rs, err := state.LoadRunState(p.RunState())
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func nodeOf(t *testing.T, p state.Paths, id string) *tree.Node {
	t.Helper()
	tr, err := tree.Load(p.Tree())
	if err != nil {
		t.Fatal(err)
	}
	n := tree.NewIndex(tr).Node(id)
	if n == nil {
		t.Fatalf("node %s not in the tree", id)
	}
	return n
}

func events(t *testing.T, p state.Paths, event string) []state.Record {
	t.Helper()
	recs, err := state.ReadJournal(p.Journal())
	if err != nil {
		t.Fatal(err)
	}
	var out []state.Record
	for _, r := range recs {
		if r.Event == event {
			out = append(out, r)
		}
	}
	return out
}

// setClock makes the rate-limit waits read reset times against now.
func setClock(t *testing.T, now time.Time) {
	t.Helper()
	old := rateLimitClock
	rateLimitClock = func() time.Time { return now }
	t.Cleanup(func() { rateLimitClock = old })
}

const fastBackoff = "rate_limit_backoff = \"10ms\"\nrate_limit_backoff_max = \"40ms\"\n"

func TestRateLimitRetriesSameNodeWithoutAttempt(t *testing.T) {
	p := agentRepo(t, countingAgent(`1|2) echo "ERROR: exceeded retry limit, last status: 429 Too Many Requests" >&2; exit 1;;
*) echo "run $n works"; `+doneMessage+`;;`), fastBackoff)
	var progress syncBuffer
	res, err := runBounded(t, context.Background(), p, &progress)
	mustComplete(t, res, err)
	m := loadMeta(t, p, 1)
	if m.Node != "a" || m.Outcome != state.OutcomeDone || m.Attempts != 0 {
		t.Fatalf("iteration 1: node %s outcome %s attempts %d; want a, done, 0", m.Node, m.Outcome, m.Attempts)
	}
	if len(m.Agent.RateLimits) != 2 {
		t.Fatalf("meta.json has %d rate limits, want 2: %+v", len(m.Agent.RateLimits), m.Agent.RateLimits)
	}
	for i, rl := range m.Agent.RateLimits {
		if !strings.Contains(rl.Evidence, "429 Too Many Requests") || rl.ExitCode != 1 {
			t.Errorf("rate limit %d = %+v, want the 429 line as evidence and exit 1", i, rl)
		}
	}
	// Capped exponential backoff: 10ms, then 20ms.
	if m.Agent.RateLimits[0].WaitMS != 10 || m.Agent.RateLimits[1].WaitMS != 20 {
		t.Errorf("waits %d ms, %d ms; want 10, 20", m.Agent.RateLimits[0].WaitMS, m.Agent.RateLimits[1].WaitMS)
	}
	if n := nodeOf(t, p, "a"); n.Attempts != 0 || n.Status != tree.StatusDone {
		t.Errorf("node a: status %s attempts %d, want done with 0 attempts", n.Status, n.Attempts)
	}
	if got := len(events(t, p, state.EventRateLimited)); got != 2 {
		t.Errorf("journal has %d rate_limited records, want 2", got)
	}
	if !strings.Contains(progress.String(), "#1 a") || !strings.Contains(progress.String(), "waiting 10ms") ||
		!strings.Contains(progress.String(), "no attempt spent: stderr: ERROR: exceeded retry limit") {
		t.Errorf("progress does not say what it waits for:\n%s", progress.String())
	}
	// The retries' output follows the first run's in the same log.
	log, _ := os.ReadFile(filepath.Join(p.RunDir(1), "executor.log"))
	if bytes.Count(log, []byte("429 Too Many Requests")) != 2 || !bytes.Contains(log, []byte("agent run 3 of iteration 1")) ||
		!bytes.Contains(log, []byte("run 3 works")) {
		t.Errorf("executor.log does not hold the three runs:\n%s", log)
	}
	if loadRunState(t, p).ConsecutiveErrors != 0 {
		t.Error("rate limits counted as consecutive errors")
	}
}

func TestRateLimitHonoursResetTime(t *testing.T) {
	// The agent says the limit resets at 7:33 AM; it is 20ms before that.
	reset := time.Date(2026, 3, 4, 7, 33, 0, 0, time.Local)
	setClock(t, reset.Add(-20*time.Millisecond))
	p := agentRepo(t, countingAgent(`1) echo "You've hit your usage limit. Upgrade to Pro or try again at 7:33 AM." >&2; exit 1;;
*) `+doneMessage+`;;`), fastBackoff)
	res, err := runBounded(t, context.Background(), p, &syncBuffer{})
	if err != nil || res.Reason != Complete {
		t.Fatalf("run: %v %+v", err, res)
	}
	rl := loadMeta(t, p, 1).Agent.RateLimits
	if len(rl) != 1 || rl[0].ResetAt == nil || !rl[0].ResetAt.Equal(reset) {
		t.Fatalf("rate limits %+v; want one resetting at %s", rl, reset)
	}
	// Until the reset, plus the base backoff as a margin.
	if rl[0].WaitMS != 30 {
		t.Errorf("waited %d ms, want 30 (20 until the reset + 10)", rl[0].WaitMS)
	}
}

func TestRateLimitOutlastingMaxWaitStopsWithoutAttempt(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 0, 0, 0, time.Local)
	setClock(t, now)
	p := agentRepo(t, countingAgent(`*) echo "You've hit your usage limit. Upgrade to Pro or try again at 7:33 AM." >&2; exit 1;;`),
		fastBackoff+"max_wait = \"1h\"\n")
	_, err := runBounded(t, context.Background(), p, &syncBuffer{})
	if err == nil || !strings.Contains(err.Error(), "later than loop.max_wait (1h0m0s) allows") ||
		!strings.Contains(err.Error(), "No attempt was spent") {
		t.Fatalf("run error = %v; want the limit outlasting max_wait", err)
	}
	m := loadMeta(t, p, 1)
	if m.Phase != state.PhaseAborted || len(m.Agent.RateLimits) != 1 {
		t.Errorf("meta: phase %s, rate limits %d; want aborted, 1", m.Phase, len(m.Agent.RateLimits))
	}
	if n := nodeOf(t, p, "a"); n.Attempts != 0 {
		t.Errorf("node a has %d attempts, want 0", n.Attempts)
	}
	if rs := loadRunState(t, p); rs.InFlight != nil {
		t.Errorf("in_flight = %+v, want null", rs.InFlight)
	}
}

func TestRateLimitMaxWaitWithoutResetTime(t *testing.T) {
	// Waits of 10, 20, then the 5ms left of max_wait, then it gives up.
	p := agentRepo(t, countingAgent(`*) echo "rate limit exceeded" >&2; exit 1;;`), fastBackoff+"max_wait = \"35ms\"\n")
	_, err := runBounded(t, context.Background(), p, &syncBuffer{})
	if err == nil || !strings.Contains(err.Error(), "has not lifted after waiting 35ms (loop.max_wait)") {
		t.Fatalf("run error = %v", err)
	}
	var waits []int64
	for _, rl := range loadMeta(t, p, 1).Agent.RateLimits {
		waits = append(waits, rl.WaitMS)
	}
	if len(waits) != 4 || waits[0] != 10 || waits[1] != 20 || waits[2] != 5 || waits[3] != 0 {
		t.Errorf("waits = %v ms, want [10 20 5 0]", waits)
	}
	if n := nodeOf(t, p, "a"); n.Attempts != 0 {
		t.Errorf("node a has %d attempts, want 0", n.Attempts)
	}
}

func TestRateLimitWaitEnds(t *testing.T) {
	for _, how := range []string{"interrupt", "stop"} {
		t.Run(how, func(t *testing.T) {
			p := agentRepo(t, countingAgent(`*) echo "429 Too Many Requests" >&2; exit 1;;`), "rate_limit_backoff = \"1h\"\nrate_limit_backoff_max = \"1h\"\nmax_wait = \"2h\"\n")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var progress syncBuffer
			go func() {
				for !strings.Contains(progress.String(), "waiting 1h0m0s") {
					time.Sleep(5 * time.Millisecond)
				}
				if how == "interrupt" {
					cancel()
				} else {
					os.WriteFile(p.StopRequest(), nil, 0o644)
				}
			}()
			res, err := runBounded(t, ctx, p, &progress)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]Reason{"interrupt": Interrupted, "stop": Stopped}[how]
			if res.Reason != want {
				t.Fatalf("run ended with %v (%s), want %v", res.Reason, res.Message, want)
			}
			m := loadMeta(t, p, 1)
			if m.Phase != state.PhaseAborted || !strings.Contains(m.Note, "no attempt was spent") {
				t.Errorf("meta: phase %s note %q", m.Phase, m.Note)
			}
			if n := nodeOf(t, p, "a"); n.Attempts != 0 {
				t.Errorf("node a has %d attempts, want 0", n.Attempts)
			}
		})
	}
}

func TestConsecutiveErrorsStopTheRun(t *testing.T) {
	p := agentRepo(t, countingAgent(`*) echo "Error: stream disconnected before completion." >&2; exit 1;;`), "max_attempts = 2\non_blocked = \"continue\"\n")
	_, err := runBounded(t, context.Background(), p, &syncBuffer{})
	if err == nil {
		t.Fatal("the run did not stop")
	}
	for _, want := range []string{"the agent failed 3 times in a row (loop.max_consecutive_errors = 3), across tasks",
		"agent exited with status 1", `the agent printed: "stderr: Error: stream disconnected before completion."`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
	// Task a used its two attempts, task b one; c was never tried.
	if a, b, c := nodeOf(t, p, "a").Attempts, nodeOf(t, p, "b").Attempts, nodeOf(t, p, "c").Attempts; a != 2 || b != 1 || c != 0 {
		t.Errorf("attempts a=%d b=%d c=%d, want 2 1 0", a, b, c)
	}
	if rs := loadRunState(t, p); rs.ConsecutiveErrors != 3 {
		t.Errorf("consecutive_errors = %d, want 3", rs.ConsecutiveErrors)
	}
}

func TestConsecutiveErrorsResetByAFinishedRun(t *testing.T) {
	// fail, fail, a run that finishes with an unusable message, fail, fail,
	// then done: never three failures in a row.
	p := agentRepo(t, countingAgent(`3) echo "not a message" > "$OUT";;
6|7|8|9) `+doneMessage+`;;
*) echo "boom" >&2; exit 1;;`), "max_attempts = 9\n")
	res, err := runBounded(t, context.Background(), p, &syncBuffer{})
	mustComplete(t, res, err)
	if m := loadMeta(t, p, 3); m.Agent.Class != "agent_error" {
		t.Errorf("iteration 3 class %s, want agent_error (no valid message)", m.Agent.Class)
	}
}

// resultEvent prints a Claude result event reporting cost and tokens.
func resultEvent(cost string) string {
	return `printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"{\"status\":\"done\",\"summary\":\"ok\"}","total_cost_usd":` + cost +
		`,"usage":{"input_tokens":100,"cache_creation_input_tokens":10,"cache_read_input_tokens":500,"output_tokens":40}}'`
}

func TestCostLimitStopsBeforeAnIteration(t *testing.T) {
	p := agentRepo(t, countingAgent(`*) `+resultEvent("0.6")+`;;`), "max_cost_usd = 1.0\n")
	res, err := runBounded(t, context.Background(), p, &syncBuffer{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != MaxIterations || res.Iterations != 2 || !strings.Contains(res.Message, "reached loop.max_cost_usd ($1.00): the agents have cost $1.2000 so far") {
		t.Fatalf("run ended with %v after %d iterations: %s", res.Reason, res.Iterations, res.Message)
	}
	rs := loadRunState(t, p)
	want := state.Usage{InputTokens: 1220, CachedInputTokens: 1000, OutputTokens: 80, CostUSD: 1.2, CostSource: state.CostReported}
	if rs.Usage.InputTokens != want.InputTokens || rs.Usage.CachedInputTokens != want.CachedInputTokens ||
		rs.Usage.OutputTokens != want.OutputTokens || rs.Usage.CostSource != want.CostSource || rs.Usage.CostUSD < 1.19 || rs.Usage.CostUSD > 1.21 {
		t.Errorf("run state usage %+v, want %+v", rs.Usage, want)
	}
	m := loadMeta(t, p, 1)
	if m.Usage == nil || m.Usage.InputTokens != 610 || m.Usage.CachedInputTokens != 500 || m.Usage.OutputTokens != 40 || m.Usage.CostUSD != 0.6 {
		t.Errorf("iteration 1 usage %+v", m.Usage)
	}
	var withUsage int
	for _, r := range events(t, p, state.EventAgentDone) {
		if r.Usage != nil && r.Usage.CostUSD == 0.6 {
			withUsage++
		}
	}
	if withUsage != 2 {
		t.Errorf("%d agent_done journal records carry the usage, want 2", withUsage)
	}
	// The limit holds across runs: a new run stops before any iteration.
	res, err = runBounded(t, context.Background(), p, &syncBuffer{})
	if err != nil || res.Reason != MaxIterations || res.Iterations != 0 {
		t.Fatalf("second run: %v %+v", err, res)
	}
}

func TestTokenLimitWithCodexEventsAndPrices(t *testing.T) {
	turn := `printf '%s\n' '{"type":"thread.started","thread_id":"t"}' '{"type":"turn.started"}' '{"type":"turn.completed","usage":{"input_tokens":1000000,"cached_input_tokens":400000,"output_tokens":100000}}'; ` + doneMessage
	p := agentRepo(t, countingAgent(`*) `+turn+`;;`), "max_tokens = 1500000\n")
	conf, _ := os.ReadFile(p.Config())
	conf = bytes.Replace(conf, []byte("[loop]"), []byte("prices = { input = 1.25, cached_input = 0.125, output = 10.0 }\n\n[loop]"), 1)
	os.WriteFile(p.Config(), conf, 0o644)
	res, err := runBounded(t, context.Background(), p, &syncBuffer{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != MaxIterations || res.Iterations != 2 || !strings.Contains(res.Message, "reached loop.max_tokens (1500000): the agents have used 2200000 tokens") {
		t.Fatalf("run ended with %v after %d iterations: %s", res.Reason, res.Iterations, res.Message)
	}
	m := loadMeta(t, p, 1)
	// 600k uncached × 1.25 + 400k cached × 0.125 + 100k out × 10, per million.
	if m.Usage == nil || m.Usage.CostSource != state.CostComputed || m.Usage.CostUSD < 1.799 || m.Usage.CostUSD > 1.801 {
		t.Errorf("iteration 1 usage %+v, want $1.80 computed", m.Usage)
	}
}
