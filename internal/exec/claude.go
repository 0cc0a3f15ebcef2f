package executor

import (
	"encoding/json"

	"github.com/runner-cli/runner/internal/strictjson"
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
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// readExtras reads the informative fields of a result event; each is
// decoded on its own, and one of an unexpected type is left out.
func (c *claudeResult) readExtras(obj []byte) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(obj, &fields) != nil {
		return
	}
	var status int
	if json.Unmarshal(fields["api_error_status"], &status) == nil {
		c.APIErrorStatus = status
	}
	json.Unmarshal(fields["errors"], &c.Errors)
	var cost float64
	if json.Unmarshal(fields["total_cost_usd"], &cost) == nil {
		c.CostUSD = &cost
	}
	var u claudeUsage
	if json.Unmarshal(fields["usage"], &u) == nil {
		c.Usage = &u
	}
	json.Unmarshal(fields["permission_denials"], &c.Denials)
}

// lastClaudeResult returns the last of the top-level objects (spans) of
// data whose "type" is "result", read as a Claude result event, and its
// index in spans; nil when there is none.
func lastClaudeResult(data []byte, spans [][2]int) (*claudeResult, int) {
	for i := len(spans) - 1; i >= 0; i-- {
		v, err := strictjson.Parse(data[spans[i][0]:spans[i][1]], scanMaxDepth)
		if err != nil {
			continue
		}
		if t := v.Get("type"); t == nil || t.Kind != strictjson.String || t.Str != "result" {
			continue
		}
		c := &claudeResult{}
		if s := v.Get("subtype"); s != nil && s.Kind == strictjson.String {
			c.Subtype = s.Str
		}
		if e := v.Get("is_error"); e != nil && e.Kind == strictjson.Bool {
			c.IsError = e.Bool
		}
		if r := v.Get("result"); r != nil && r.Kind == strictjson.String {
			text := r.Str
			c.Result = &text
		}
		c.readExtras(data[spans[i][0]:spans[i][1]])
		return c, i
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
