package executor

import (
	"bytes"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/runner-cli/runner/internal/state"
)

// codexStream is what the runner reads from the JSONL events of
// `codex exec --json`: thread.started, turn.started, item.started,
// item.updated and item.completed (with items such as agent_message,
// command_execution, file_change), turn.completed (with usage),
// turn.failed and error.
type codexStream struct {
	// Failure is the message of a turn.failed event, or of an error event
	// that no turn.completed followed (Codex also reports a stream error
	// it recovers from as an error event); "" when the turn did not fail.
	Failure      string
	FailureEvent string // "turn.failed" or "error"
	// LastError is the message of the last error event, recovered from or
	// not.
	LastError string
	// Usage is the usage of the last turn.completed event: Codex reports
	// the thread's running total there.
	Usage *codexUsage
	// Declined lists the commands Codex's approval policy refused (the
	// first maxDenials).
	Declined []string
	// Events counts the lines that were Codex events (by their type).
	Events int
}

type codexUsage struct {
	InputTokens       int64 `json:"input_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
}

// codexEvent is the part of a Codex event the runner reads.
type codexEvent struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage *codexUsage `json:"usage"`
	Item  *struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		Status  string `json:"status"`
	} `json:"item"`
}

// lenient reads the agents' event streams: unknown members are ignored,
// and duplicate names and invalid UTF-8 do not spoil an event.
var lenient = []json.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// codexTypes are the event types that make a line a Codex event.
var codexTypes = map[string]bool{
	"thread.started": true, "turn.started": true, "turn.completed": true, "turn.failed": true,
	"item.started": true, "item.updated": true, "item.completed": true, "error": true,
}

// maxDenials bounds the refused tool calls a run records.
const maxDenials = 100

// codexScanner reads Codex events one stdout line at a time.
type codexScanner struct {
	s            codexStream
	pendingError string
}

// line reads one line of stdout; text lines and other JSON are skipped.
// A line whose first member is "type" (as in every Codex event) is only
// decoded when its type carries something the runner reads.
func (c *codexScanner) line(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) < 2 || line[0] != '{' || !bytes.Contains(line, []byte(`"type"`)) {
		return
	}
	if t, ok := leadingType(line); ok {
		switch {
		case t == "error" || t == "turn.failed" || t == "turn.completed":
		case t == "item.completed" && bytes.Contains(line, []byte(`"declined"`)):
		default:
			if codexTypes[t] {
				c.s.Events++
			}
			return
		}
	}
	var ev codexEvent
	if json.Unmarshal(line, &ev, lenient...) != nil || !codexTypes[ev.Type] {
		return
	}
	s := &c.s
	s.Events++
	switch ev.Type {
	case "error":
		c.pendingError = ev.Message
		if c.pendingError == "" {
			c.pendingError = "error event without a message"
		}
		s.LastError = c.pendingError
	case "turn.failed":
		msg := "turn failed"
		if ev.Error != nil && ev.Error.Message != "" {
			msg = ev.Error.Message
		}
		s.Failure, s.FailureEvent = msg, "turn.failed"
		c.pendingError = ""
	case "turn.completed":
		c.pendingError = ""
		if ev.Usage != nil {
			u := *ev.Usage
			s.Usage = &u
		}
	case "item.completed":
		if ev.Item != nil && ev.Item.Type == "command_execution" && ev.Item.Status == "declined" && len(s.Declined) < maxDenials {
			s.Declined = append(s.Declined, ev.Item.Command)
		}
	}
}

// leadingType returns the value of a line's "type" when it is the line's
// first member, written without escapes: {"type":"turn.completed",...}.
func leadingType(line []byte) (string, bool) {
	const prefix = `{"type":"`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return "", false
	}
	rest := line[len(prefix):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return "", false
	}
	return string(rest[:end]), true
}

// result returns what the lines read so far say.
func (c *codexScanner) result() codexStream {
	s := c.s
	if c.pendingError != "" && s.Failure == "" {
		s.Failure, s.FailureEvent = c.pendingError, "error"
	}
	return s
}

// scanCodex reads the Codex events among the lines of stdout. A first
// line cut by the tail window, text lines and other JSON are skipped.
func scanCodex(stdout []byte) codexStream {
	var c codexScanner
	for _, line := range bytes.Split(stdout, []byte{'\n'}) {
		c.line(line)
	}
	return c.result()
}

// usageOf returns the usage an agent run reported: the Claude result
// event's (tokens and total_cost_usd), else the last Codex turn.completed
// (tokens only), with the cost computed from prices when the agent gave
// none. Nil when nothing was reported.
func usageOf(c *claudeResult, cx codexStream, p state.Prices) *state.Usage {
	var u state.Usage
	switch {
	case c != nil && (c.Usage != nil || c.CostUSD != nil):
		if cu := c.Usage; cu != nil {
			u.InputTokens = cu.InputTokens + cu.CacheCreationInputTokens + cu.CacheReadInputTokens
			u.CachedInputTokens = cu.CacheReadInputTokens
			u.OutputTokens = cu.OutputTokens
		}
		if c.CostUSD != nil {
			u.CostUSD, u.CostSource = *c.CostUSD, state.CostReported
		}
	case cx.Usage != nil:
		u.InputTokens = cx.Usage.InputTokens
		u.CachedInputTokens = min(cx.Usage.CachedInputTokens, cx.Usage.InputTokens)
		u.OutputTokens = cx.Usage.OutputTokens
	default:
		return nil
	}
	if u.CostSource == "" && p.IsSet() {
		u.CostUSD = p.Cost(u)
		u.CostSource = state.CostComputed
	}
	return &u
}

// denialsOf lists the tool calls the agent was refused, at most
// maxDenials of them.
func denialsOf(c *claudeResult, cx codexStream) []state.PermissionDenial {
	var out []state.PermissionDenial
	if c != nil {
		for _, d := range c.Denials[:min(len(c.Denials), maxDenials)] {
			in := ""
			if len(d.ToolInput) > 0 && string(d.ToolInput) != "null" {
				in = shorten(compactJSON(d.ToolInput), 200)
			}
			out = append(out, state.PermissionDenial{Tool: d.ToolName, Input: in})
		}
	}
	for _, cmd := range cx.Declined[:min(len(cx.Declined), maxDenials-len(out))] {
		out = append(out, state.PermissionDenial{Tool: "command_execution", Input: shorten(cmd, 200)})
	}
	return out
}

func compactJSON(raw jsontext.Value) string {
	v := slices.Clone(raw)
	if v.Compact() != nil {
		return string(raw)
	}
	return string(v)
}

// shorten puts s on one line and cuts it to about n bytes.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
