package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/runner-cli/runner/internal/state"
)

// tokenCount is a codex token_count event with running total in tokens
// of input (none cached) and none of output.
func tokenCount(in int64) string {
	return fmt.Sprintf(`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":%d,"cached_input_tokens":0,"output_tokens":0}}}}`+"\n", in)
}

// The agent's commands can write codex's session log: nothing they write
// there lowers the usage read while it works. Each case has codex write
// its log through the file it opened (as codex does), the agent do its
// worst in between, and codex write again.
func TestSessionLogEvasions(t *testing.T) {
	for _, c := range []struct {
		name  string
		agent func(t *testing.T, log string)
	}{
		{"a lower total appended", func(t *testing.T, log string) {
			appendTo(t, log, tokenCount(10))
		}},
		{"the log replaced by an empty one", func(t *testing.T, log string) {
			if err := os.Remove(log); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(log, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"the log unlinked", func(t *testing.T, log string) {
			if err := os.Remove(log); err != nil {
				t.Fatal(err)
			}
		}},
		{"a decoy named before it", func(t *testing.T, log string) {
			if err := os.WriteFile(filepath.Join(filepath.Dir(log), "rollout-0000.jsonl"), []byte(tokenCount(1)), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			dir := filepath.Join(home, "sessions", "2026", "11", "29")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			log := filepath.Join(dir, "rollout-2026-11-29T12-00-00-a.jsonl")
			codex, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer codex.Close()
			live := &liveUsage{}
			w := &sessionWatch{dir: filepath.Join(home, "sessions"), live: live, files: map[fileID]*sessionFile{}}
			defer func() {
				for _, sf := range w.files {
					sf.f.Close()
				}
			}()
			codex.WriteString(tokenCount(1000))
			w.look(true)
			c.agent(t, log)
			w.look(true)
			if u, _ := live.usage(); u.InputTokens != 1000 {
				t.Errorf("after the agent's move: %d input tokens read, want 1000", u.InputTokens)
			}
			codex.WriteString(tokenCount(2000))
			w.look(true)
			if u, _ := live.usage(); u.InputTokens != 2000 {
				t.Errorf("after codex's next response: %d input tokens read, want 2000", u.InputTokens)
			}
		})
	}
}

// A log truncated under codex is read again from its start.
func TestSessionLogTruncated(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "sessions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "rollout-a.jsonl")
	appendTo(t, log, tokenCount(1000)+tokenCount(2000))
	live := &liveUsage{}
	w := &sessionWatch{dir: dir, live: live, files: map[fileID]*sessionFile{}}
	w.look(true)
	if err := os.Truncate(log, 0); err != nil {
		t.Fatal(err)
	}
	appendTo(t, log, tokenCount(3000))
	w.look(true)
	for _, sf := range w.files {
		sf.f.Close()
	}
	if u, _ := live.usage(); u.InputTokens != 3000 {
		t.Errorf("%d input tokens read, want 3000", u.InputTokens)
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// A decoy log named before codex's, there before the watcher first
// looks, does not hide codex's: every log is followed.
func TestSessionLogDecoyFirst(t *testing.T) {
	dir := t.TempDir()
	appendTo(t, filepath.Join(dir, "rollout-0000.jsonl"), tokenCount(1))
	appendTo(t, filepath.Join(dir, "rollout-2026-11-29T12-00-00-a.jsonl"), tokenCount(1000))
	live := &liveUsage{}
	w := &sessionWatch{dir: dir, live: live, files: map[fileID]*sessionFile{}}
	w.look(true)
	for _, sf := range w.files {
		sf.f.Close()
	}
	if u, _ := live.usage(); u.InputTokens != 1000 {
		t.Errorf("%d input tokens read, want 1000", u.InputTokens)
	}
}

// assistant is a Claude stream-json assistant event of message id with
// in input and out output tokens.
func assistant(id string, in, out int64) []byte {
	return fmt.Appendf(nil, `{"type":"assistant","message":{"id":%q,"usage":{"input_tokens":%d,"output_tokens":%d}}}`, id, in, out)
}

// Claude's assistant events: each message counts once, at its highest
// report; a later report of the same message lower than an earlier one
// (written into the CLI's output by a command of the agent's) lowers
// nothing; and a lower usage at the end does not lower what was read
// while the agent worked.
func TestClaudeUsageOnlyRises(t *testing.T) {
	live := &liveUsage{}
	for _, ev := range [][]byte{
		assistant("m1", 100, 10),
		assistant("m1", 100, 30), // the same message, its output grown
		assistant("m2", 50, 5),
		assistant("m2", 1, 1), // forged
	} {
		live.claudeAssistant(ev)
	}
	if u, _ := live.usage(); u.InputTokens != 150 || u.OutputTokens != 35 {
		t.Fatalf("usage %+v, want 150 in, 35 out", u)
	}
	res := &Result{Usage: &state.Usage{InputTokens: 10, OutputTokens: 1, CostUSD: 0.01, CostSource: state.CostReported}}
	concludeSpend(res, live, false)
	if u := res.Usage; u.InputTokens != 150 || u.OutputTokens != 35 || u.CostUSD != 0.01 {
		t.Errorf("booked %+v, want 150 in, 35 out, the reported $0.01", u)
	}
}
