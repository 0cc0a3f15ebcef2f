package fakeagent

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Turn is one model response of a fake codex or claude at work, before
// its final message: it waits Pause, writes its files, and reports its
// usage as the real CLI does while it works. Claude: an assistant event
// (two, for a response with a text and a tool block, sharing the message
// id and the usage) with message.usage. Codex: a reasoning item on
// stdout and a token_count event, with the thread's running total, in
// its session log $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl.
// The usage reported at the end (codex turn.completed, the claude result)
// is the turns' sum plus the step's usage.
type Turn struct {
	Pause string `json:"pause,omitempty"`
	Write []File `json:"write,omitempty"`
	Usage Usage  `json:"usage"`
}

// checkTurns checks the turns' pauses.
func (st *Step) checkTurns() error {
	for i, t := range st.Turns {
		if t.Pause == "" {
			continue
		}
		if _, err := time.ParseDuration(t.Pause); err != nil {
			return fmt.Errorf("turns[%d].pause: %w", i, err)
		}
	}
	return nil
}

// totalUsage is the usage reported at the end: the turns' and the
// step's.
func (st *Step) totalUsage() *Usage {
	if st.Usage == nil && len(st.Turns) == 0 {
		return nil
	}
	var sum Usage
	var cost float64
	hasCost := false
	for _, u := range append(turnUsages(st.Turns), st.Usage) {
		if u == nil {
			continue
		}
		sum.InputTokens += u.InputTokens
		sum.CachedInputTokens += u.CachedInputTokens
		sum.OutputTokens += u.OutputTokens
		if u.CostUSD != nil {
			cost += *u.CostUSD
			hasCost = true
		}
	}
	if hasCost {
		sum.CostUSD = &cost
	}
	return &sum
}

func turnUsages(turns []Turn) []*Usage {
	out := make([]*Usage, len(turns))
	for i := range turns {
		out[i] = &turns[i].Usage
	}
	return out
}

// play carries out turn k (0-based): its pause, then its files.
func (t Turn) play() error {
	if t.Pause != "" {
		d, _ := time.ParseDuration(t.Pause)
		time.Sleep(d)
	}
	for _, f := range t.Write {
		if err := writeFile(f.Path, []byte(f.Content), f.Append); err != nil {
			return err
		}
	}
	return nil
}

// codexTurns plays the turns as codex: items on stdout (ev), token_count
// events in the session log under CODEX_HOME (none when it is unset or
// ephemeral is set).
func (st *Step) codexTurns(ev *emitter, ephemeral bool) error {
	if len(st.Turns) == 0 {
		return nil
	}
	var log *os.File
	if home := os.Getenv("CODEX_HOME"); home != "" && !ephemeral {
		now := time.Now().UTC()
		dir := filepath.Join(home, "sessions", now.Format("2006"), now.Format("01"), now.Format("02"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(dir, "rollout-"+now.Format("2006-01-02T15-04-05")+"-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl"))
		if err != nil {
			return err
		}
		defer f.Close()
		log = f
		logEvent(log, map[string]any{"type": "session_meta", "payload": map[string]any{"id": "0199a213-81c0-7800-8aa1-bbab2a035a53"}})
	}
	var total Usage
	for k, t := range st.Turns {
		if err := t.play(); err != nil {
			return err
		}
		ev.emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": fmt.Sprintf("turn_%d", k), "type": "reasoning", "text": fmt.Sprintf("turn %d", k+1)}})
		total.InputTokens += t.Usage.InputTokens
		total.CachedInputTokens += t.Usage.CachedInputTokens
		total.OutputTokens += t.Usage.OutputTokens
		if log != nil {
			logEvent(log, map[string]any{"type": "event_msg", "payload": map[string]any{"type": "token_count", "info": map[string]any{
				"total_token_usage": codexUsageOf(total), "last_token_usage": codexUsageOf(t.Usage)}}})
		}
	}
	return ev.err
}

func codexUsageOf(u Usage) map[string]any {
	return map[string]any{"input_tokens": u.InputTokens, "cached_input_tokens": u.CachedInputTokens, "output_tokens": u.OutputTokens,
		"reasoning_output_tokens": 0, "total_tokens": u.InputTokens + u.OutputTokens}
}

// logEvent appends one event to codex's session log, as a line of its own.
func logEvent(f *os.File, payload map[string]any) {
	payload["timestamp"] = time.Now().UTC().Format(time.RFC3339Nano)
	line, err := marshalEvent(payload)
	if err == nil {
		f.Write(append(line, '\n'))
	}
}

// claudeTurns plays the turns as claude: assistant events with the
// usage of each message, on stdout (ev).
func (st *Step) claudeTurns(ev *emitter, session string) error {
	for k, t := range st.Turns {
		if err := t.play(); err != nil {
			return err
		}
		usage := map[string]any{"input_tokens": t.Usage.InputTokens - t.Usage.CachedInputTokens, "cache_creation_input_tokens": 0,
			"cache_read_input_tokens": t.Usage.CachedInputTokens, "output_tokens": t.Usage.OutputTokens}
		id := fmt.Sprintf("msg_turn_%d", k+1)
		// A response with two content blocks comes as two events of one
		// message, each with the message's usage.
		for _, block := range []map[string]any{{"type": "thinking", "thinking": fmt.Sprintf("turn %d", k+1)}, {"type": "text", "text": fmt.Sprintf("turn %d done", k+1)}} {
			ev.emit(map[string]any{"type": "assistant", "session_id": session, "message": map[string]any{
				"id": id, "type": "message", "role": "assistant", "model": "claude-fake-1", "content": []any{block}, "usage": usage}})
		}
	}
	return ev.err
}
