package executor

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/runner-cli/runner/internal/state"
)

// The usage the real CLIs report while they work, as recorded by
// bench/realcli-caps.sh through the mock model (testdata/real): every
// model response of the scripted run reported 1000 input tokens (400 of
// them cached) and 100 output, 1100 tokens a turn.
//
//   - claude-2.1.328-usage.stdout: Claude Code 2.1.328's stream-json
//     (`claude -p --output-format stream-json --verbose`) of a run of six
//     commands and a final message, its assistant events and its result;
//   - codex-0.169.0-rollout-usage.jsonl: codex-cli 0.169.0's session log
//     (CODEX_HOME/sessions/…/rollout-*.jsonl) of a run the runner stopped
//     at its third turn: the function calls, the token_usage_record lines
//     and the token_count events.

// realPrices price a turn of the fixtures at $0.0114: 600 uncached input
// tokens at $10, 400 cached at $1 and 100 output at $50 per million.
var realPrices = state.Prices{Input: 10, CachedInput: 1, Output: 50}

// realLines returns the lines of a fixture of testdata/real, each with
// its newline.
func realLines(t *testing.T, name string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "real", name))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte("\n")) {
		t.Fatalf("%s: the last line has no newline", name)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	return lines[:len(lines)-1] // the empty rest after the last newline
}

type realCap struct {
	name, key, scope, unit string
	cap, used              float64
}

// realCaps are the caps the fixtures' runs reach at their third turn, in
// tokens (3300 of 3000) and in price ($0.0342 of $0.03).
var realCaps = []realCap{
	{"tokens", "loop.task_max_tokens", state.ScopeTask, state.UnitTokens, 3000, 3300},
	{"cost", "loop.max_cost_usd", state.ScopeRun, state.UnitUSD, 0.03, 0.0342},
}

// stopRecorder is the stop function of a liveUsage that notes when it was
// called: the number of usage reports read by then.
type stopRecorder struct {
	reports int // usage reports read so far
	at      []int
	hit     *state.CapHit
}

func (s *stopRecorder) stop(h *state.CapHit) { s.at, s.hit = append(s.at, s.reports), h }

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9+1e-6*math.Abs(b) }

// readReal feeds the lines of a fixture to read, under the cap c, counting
// the lines that hold report (a usage report); it checks that they are
// turns, that the agent is stopped once, at the third, with the figures
// of c, and that the usage read is that of turns turns. It returns the
// usage read.
func readReal(t *testing.T, c realCap, fixture, report string, turns int64, read func(*liveUsage, []byte)) state.Usage {
	t.Helper()
	rec := &stopRecorder{}
	live := &liveUsage{prices: realPrices, allowance: allowance(c.key, c.scope, c.unit, c.cap), stop: rec.stop}
	for _, line := range realLines(t, fixture) {
		if bytes.Contains(line, []byte(report)) {
			rec.reports++
		}
		read(live, line)
	}
	if rec.reports != int(turns) {
		t.Fatalf("%d usage reports (%s) in the fixture, want %d", rec.reports, report, turns)
	}
	if len(rec.at) != 1 || rec.at[0] != 3 {
		t.Fatalf("stopped after usage reports %v, want once, at the third", rec.at)
	}
	if h := rec.hit; h.Key != c.key || !near(h.Used, c.used) {
		t.Fatalf("cap hit %+v, want %s at %v", h, c.key, c.used)
	}
	u, seen := live.usage()
	if !seen || u.InputTokens != 1000*turns || u.CachedInputTokens != 400*turns || u.OutputTokens != 100*turns || !near(u.CostUSD, float64(turns)*0.0114) {
		t.Fatalf("live usage %+v (seen %v), want %d turns of 1000 in (400 cached), 100 out, $0.0114", u, seen, turns)
	}
	return u
}

// Claude Code's stream-json, as it comes: each assistant event carries
// its message's usage (input without the cached part, which is in
// cache_read_input_tokens), the live reader sums them to what the CLI's
// own result event says at the end, and a cap is reached at the third
// assistant event, never before.
func TestRealClaudeStreamUsage(t *testing.T) {
	for _, c := range realCaps {
		t.Run(c.name, func(t *testing.T) {
			e := newEventStream()
			u := readReal(t, c, "claude-2.1.328-usage.stdout", `{"type":"assistant"`, 7, func(live *liveUsage, line []byte) {
				e.live = live
				e.Write(line)
			})
			e.Close()
			end := usageOf(e.claude, codexStream{}, realPrices)
			if end == nil || end.InputTokens != u.InputTokens || end.CachedInputTokens != u.CachedInputTokens || end.OutputTokens != u.OutputTokens {
				t.Fatalf("the result event says %+v, the assistant events %+v", end, u)
			}
		})
	}
}

// Codex's session log, line by line: each token_count event carries the
// thread's running total (token_usage_record lines and the rest are not
// read), and a cap is reached at the third.
func TestRealCodexRolloutUsage(t *testing.T) {
	for _, c := range realCaps {
		t.Run(c.name, func(t *testing.T) {
			readReal(t, c, "codex-0.169.0-rollout-usage.jsonl", `"type":"token_count"`, 3, func(live *liveUsage, line []byte) {
				w := &sessionWatch{live: live}
				w.line(bytes.TrimSuffix(line, []byte("\n")))
			})
		})
	}
}

// The session log where codex keeps it, found and followed by the
// watcher: at its end the running total of the last token_count.
func TestRealCodexRolloutWatched(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "sessions", "2026", "11", "29")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := bytes.Join(realLines(t, "codex-0.169.0-rollout-usage.jsonl"), nil)
	if err := os.WriteFile(filepath.Join(dir, "rollout-2026-11-29T11-45-26-01a2271f-cff9-76a3-a0c6-3aefe4bb4aa4.jsonl"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	live := &liveUsage{}
	watchSession(home, live)()
	if u, seen := live.usage(); !seen || u.InputTokens != 3000 || u.CachedInputTokens != 1200 || u.OutputTokens != 300 {
		t.Fatalf("usage %+v (seen %v), want 3000 in (1200 cached), 300 out", u, seen)
	}
}
