package executor

import (
	"slices"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// claudeResult is what the runner reads from a Claude result event or
// --output-format json envelope.
type claudeResult struct {
	Subtype string
	IsError bool
	Result  *string // nil when the event has no result text

	APIErrorStatus int      // api_error_status, 0 when absent
	Errors         []string // errors of the error subtypes (error_max_turns, ...)
	CostUSD        *float64 // total_cost_usd
	Usage          *claudeUsage
	Denials        []claudeDenial // permission_denials
}

// claudeUsage is the usage object of a Claude result event. Its
// input_tokens leave out the cache reads and writes.
type claudeUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

// claudeDenial is one entry of a result event's permission_denials.
type claudeDenial struct {
	ToolName  string         `json:"tool_name"`
	ToolInput jsontext.Value `json:"tool_input"`
}

// claudeEvent holds the members of a Claude event the runner reads, each
// kept as it is written and decoded on its own, so that one of an
// unexpected type is left out instead of spoiling the event.
type claudeEvent struct {
	Type           jsontext.Value `json:"type"`
	Status         jsontext.Value `json:"status"`
	Subtype        jsontext.Value `json:"subtype"`
	IsError        jsontext.Value `json:"is_error"`
	Result         jsontext.Value `json:"result"`
	APIErrorStatus jsontext.Value `json:"api_error_status"`
	Errors         jsontext.Value `json:"errors"`
	TotalCostUSD   jsontext.Value `json:"total_cost_usd"`
	Usage          jsontext.Value `json:"usage"`
	Denials        jsontext.Value `json:"permission_denials"`
}

// readEvent decodes obj, a JSON object, into ev. Unknown members are
// ignored; duplicate names and invalid UTF-8 make obj no event (escaped
// lone surrogates read as U+FFFD).
func readEvent(obj []byte, ev *claudeEvent) bool {
	return utf8.Valid(obj) && json.Unmarshal(obj, ev, jsontext.AllowInvalidUTF8(true)) == nil
}

// member decodes one member of an event into v when it is of one of the
// kinds given.
func member(raw jsontext.Value, v any, kinds ...jsontext.Kind) bool {
	return len(raw) > 0 && slices.Contains(kinds, raw.Kind()) && json.Unmarshal(raw, v, jsontext.AllowInvalidUTF8(true)) == nil
}

// result reads ev as a Claude result event; nil when its "type" is not
// "result".
func (ev *claudeEvent) result() *claudeResult {
	var typ string
	if !member(ev.Type, &typ, '"') || typ != "result" {
		return nil
	}
	c := &claudeResult{}
	member(ev.Subtype, &c.Subtype, '"')
	if len(ev.IsError) > 0 && (ev.IsError.Kind() == 't' || ev.IsError.Kind() == 'f') {
		c.IsError = ev.IsError.Kind() == 't'
	}
	var text string
	if member(ev.Result, &text, '"') {
		c.Result = &text
	}
	var status int
	if member(ev.APIErrorStatus, &status, '0') {
		c.APIErrorStatus = status
	}
	member(ev.Errors, &c.Errors, '[', 'n')
	var cost float64
	if member(ev.TotalCostUSD, &cost, '0', 'n') {
		c.CostUSD = &cost
	}
	var u claudeUsage
	if member(ev.Usage, &u, '{', 'n') {
		c.Usage = &u
	}
	member(ev.Denials, &c.Denials, '[', 'n')
	return c
}

// lastClaudeResult returns the last of the top-level objects (spans) of
// data whose "type" is "result", read as a Claude result event, and its
// index in spans; nil when there is none.
func lastClaudeResult(data []byte, spans [][2]int) (*claudeResult, int) {
	for i := len(spans) - 1; i >= 0; i-- {
		var ev claudeEvent
		if !readEvent(data[spans[i][0]:spans[i][1]], &ev) {
			continue
		}
		if c := ev.result(); c != nil {
			return c, i
		}
	}
	return nil, -1
}

// claudeResultOf returns the last Claude result event of stdout: the one
// the event stream read or the one in the tail, whichever ends later (the
// tail also holds objects that span lines).
func claudeResultOf(out stdoutView, spans [][2]int) *claudeResult {
	c, i := lastClaudeResult(out.tail, spans)
	if s := out.stream; s != nil && s.claude != nil {
		if c == nil || s.claudeEnd >= out.tailStart+int64(spans[i][1]) {
			return s.claude
		}
	}
	return c
}
