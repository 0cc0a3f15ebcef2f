package executor

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// checkRunFiles fails when a file of the run folder is over limit, or,
// with wholeLines, when a line of events.jsonl is neither a JSON object, a
// cut marker nor a retry mark.
func checkRunFiles(t *testing.T, runDir string, limit int64, wholeLines bool) {
	t.Helper()
	entries, err := os.ReadDir(runDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		st, err := os.Stat(filepath.Join(runDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > limit {
			t.Errorf("%s is %d bytes, over the %d limit", e.Name(), st.Size(), limit)
		}
	}
	data, err := os.ReadFile(filepath.Join(runDir, EventsFileName))
	if err != nil || !wholeLines {
		return
	}
	cutLine := regexp.MustCompile(`^\[runner: \d+ bytes of output cut here\]$`)
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line != "" && !json.Valid([]byte(line)) && !cutLine.MatchString(line) && !strings.HasPrefix(line, "--- runner: agent run ") {
			t.Errorf("%s line %d is not whole: %.80q", EventsFileName, i+1, line)
		}
	}
}

// TestRunBoundsEventsAndReadsTheWholeStream is the attack: a codex agent
// printing megabytes of events against a small output_limit. Every file
// stays within the limit, the events keep whole lines, executor.log holds
// stderr (not the events a second time), and the usage of the last
// turn.completed is read.
func TestRunBoundsEventsAndReadsTheWholeStream(t *testing.T) {
	o, r := setupCLI(t, PresetCodex, `{"default": {"json_filler": 8000000, "stderr": "note: on stderr\n",
		"commands": [{"command": "git push", "declined": true}],
		"usage": {"input_tokens": 123, "cached_input_tokens": 23, "output_tokens": 45},
		"message": {"status": "done", "summary": "printed a lot"}}}`)
	o.OutputLimit = 64 << 10
	res := runBounded(t, context.Background(), o, r)
	if res.Class != ClassOK || res.Message == nil || res.Message.Summary != "printed a lot" {
		t.Fatalf("class %s (%s), message %+v", res.Class, res.Error, res.Message)
	}
	if res.Usage == nil || res.Usage.InputTokens != 123 || res.Usage.OutputTokens != 45 {
		t.Errorf("usage %+v, want the last turn.completed's", res.Usage)
	}
	if len(res.PermissionDenials) != 1 {
		t.Errorf("denials %+v, want the declined git push", res.PermissionDenials)
	}
	if res.LogBytes < 8000000 || res.CutBytes < 8000000-2*o.OutputLimit {
		t.Errorf("LogBytes %d, CutBytes %d", res.LogBytes, res.CutBytes)
	}
	checkRunFiles(t, r.RunDir, o.OutputLimit, true)
	log := readFile(t, filepath.Join(r.RunDir, LogFileName))
	if !strings.HasPrefix(log, eventsNote) || !strings.Contains(log, "note: on stderr") || strings.Contains(log, `"type"`) {
		t.Errorf("executor.log is not the note and stderr only:\n%s", log)
	}
	if res.LogTail != "note: on stderr" {
		t.Errorf("LogTail = %q", res.LogTail)
	}
	events := readFile(t, filepath.Join(r.RunDir, EventsFileName))
	if !strings.HasPrefix(events, `{"type":"thread.started"`) || !strings.HasSuffix(events, "\"output_tokens\":45}}\n") ||
		!strings.Contains(events, " bytes of output cut here]\n") {
		t.Errorf("events.jsonl does not keep its head, a marker and its tail: starts %.60q, ends %q", events, events[len(events)-60:])
	}
}

// TestRunClaudeHugeStream: the result event that ends a huge stream is
// found, and so is one too large for the in-memory tail of stdout.
func TestRunClaudeHugeStream(t *testing.T) {
	big := strings.Repeat("a long summary ", (2<<20)/15)
	msg, _ := json.Marshal(map[string]string{"status": "done", "summary": big})
	tests := []struct {
		name, script, summary string
		wholeLines            bool // the result line fits in the file
	}{
		{"after 8 MB of events", `{"default": {"json_filler": 8000000, "usage": {"input_tokens": 10, "output_tokens": 2, "cost_usd": 0.75},
			"message": {"status": "done", "summary": "found"}}}`, "found", true},
		{"a result line larger than the tail", `{"default": {"usage": {"input_tokens": 10, "output_tokens": 2, "cost_usd": 0.75},
			"message": ` + string(msg) + `}}`, big, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, r := setupCLI(t, PresetClaude, tt.script)
			o.OutputLimit = 1 << 20
			res := runBounded(t, context.Background(), o, r)
			if res.Class != ClassOK || res.MessageSource != SourceResultEvent || res.Message == nil || res.Message.Summary != tt.summary {
				t.Fatalf("class %s (%s), source %s, message error %q", res.Class, res.Error, res.MessageSource, res.MessageError)
			}
			if res.Usage == nil || res.Usage.CostUSD != 0.75 {
				t.Errorf("usage %+v", res.Usage)
			}
			checkRunFiles(t, r.RunDir, o.OutputLimit, tt.wholeLines)
		})
	}
}

// TestRunRetriesStayWithinTheLimit runs three agent runs of one iteration,
// each printing more than the limit: each file holds all three runs'
// marks and stays within the limit.
func TestRunRetriesStayWithinTheLimit(t *testing.T) {
	o, r := setupCLI(t, PresetCodex, `{"steps": [
	  {"attempt": 1, "json_filler": 300000, "stderr": "ERROR: 429 Too Many Requests\n", "error": "429 Too Many Requests"},
	  {"attempt": 2, "json_filler": 300000, "stderr": "ERROR: 429 Too Many Requests\n", "error": "429 Too Many Requests"},
	  {"attempt": 3, "json_filler": 300000, "stderr": "fine now\n", "message": {"status": "done", "summary": "s"}}]}`)
	o.OutputLimit = 64 << 10
	for retry := range 3 {
		r.Retry = retry
		res := runBounded(t, context.Background(), o, r)
		want := ClassRateLimited
		if retry == 2 {
			want = ClassOK
		}
		if res.Class != want {
			t.Fatalf("run %d: class %s (%s)", retry+1, res.Class, res.Error)
		}
		checkRunFiles(t, r.RunDir, o.OutputLimit, true)
	}
	for _, name := range []string{LogFileName, EventsFileName} {
		data := readFile(t, filepath.Join(r.RunDir, name))
		if !strings.Contains(data, "agent run 3 of iteration 7") || !strings.HasSuffix(strings.TrimSpace(data), map[string]string{
			LogFileName: "fine now", EventsFileName: `"output_tokens":0}}`}[name]) {
			t.Errorf("%s does not end with the third run:\n%s", name, data[len(data)-200:])
		}
	}
	if log := readFile(t, filepath.Join(r.RunDir, LogFileName)); !strings.HasPrefix(log, eventsNote) {
		t.Errorf("executor.log lost its first line")
	}
}

// TestRunMessageErrorOfAFailedRun: a codex run that hit a usage limit
// leaves no final message, and MessageError says why, not that the last
// JSON object (a codex event) is not a message.
func TestRunMessageErrorOfAFailedRun(t *testing.T) {
	o, r := setupCLI(t, PresetCodex, `{"default": {"error": "You've hit your usage limit. Try again in 2 hours."}}`)
	res := runBounded(t, context.Background(), o, r)
	if res.Class != ClassRateLimited {
		t.Fatalf("class %s (%s)", res.Class, res.Error)
	}
	want := "no final message: the agent hit a usage or rate limit: codex turn.failed: You've hit your usage limit. Try again in 2 hours.; the limit resets at "
	if !strings.HasPrefix(res.MessageError, want) || res.MessageSource != "" {
		t.Errorf("MessageError = %q (source %q), want it to start with %q", res.MessageError, res.MessageSource, want)
	}
}
