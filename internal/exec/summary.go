package executor

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/runner-cli/runner/internal/fsutil"
)

// eventLineMax bounds an event line: a longer one ends the summary.
const eventLineMax = 16 << 20

// EventSummary is what an agent's event stream says it did
// (runs/N/events.jsonl of the codex and claude presets).
type EventSummary struct {
	Events   int
	Kind     string // "codex", "claude" or "" when no event was recognised
	Commands []EventCommand
	Files    []string // changed files, in order, each once
	Errors   []string // Codex error and turn.failed messages
	Cut      string   // why the summary stopped early, if it did
}

type EventCommand struct {
	Command string
	Exit    string // "exit 0", "failed", "declined", "refused", "" when unknown
}

// SummarizeEvents reads an events.jsonl: Codex items (command_execution,
// file_change, error events) or Claude tool uses (Bash commands; Write,
// Edit, MultiEdit and NotebookEdit files) and their results. It returns
// nil when the file does not exist.
func SummarizeEvents(path string) *EventSummary {
	f, err := fsutil.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	s := &EventSummary{}
	seenFile := map[string]bool{}
	addFile := func(p string) {
		if p != "" && !seenFile[p] {
			seenFile[p] = true
			s.Files = append(s.Files, p)
		}
	}
	claudeCmd := map[string]int{} // tool_use id -> index in Commands
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), eventLineMax)
	for sc.Scan() {
		var ev struct {
			Type    string `json:"type"`
			Message json.RawMessage
			Error   *struct {
				Message string `json:"message"`
			} `json:"error"`
			Item *struct {
				Type     string `json:"type"`
				Command  string `json:"command"`
				ExitCode *int   `json:"exit_code"`
				Status   string `json:"status"`
				Changes  []struct {
					Path string `json:"path"`
				} `json:"changes"`
			} `json:"item"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Type == "" {
			continue
		}
		s.Events++
		switch ev.Type {
		case "item.completed":
			s.Kind = "codex"
			if ev.Item == nil {
				continue
			}
			switch ev.Item.Type {
			case "command_execution":
				c := EventCommand{Command: ev.Item.Command}
				switch {
				case ev.Item.Status == "declined":
					c.Exit = "declined"
				case ev.Item.ExitCode != nil:
					c.Exit = fmt.Sprintf("exit %d", *ev.Item.ExitCode)
				case ev.Item.Status == "failed":
					c.Exit = "failed"
				}
				s.Commands = append(s.Commands, c)
			case "file_change":
				for _, ch := range ev.Item.Changes {
					addFile(ch.Path)
				}
			}
		case "error", "turn.failed":
			s.Kind = "codex"
			msg := ""
			if ev.Error != nil {
				msg = ev.Error.Message
			} else {
				json.Unmarshal(ev.Message, &msg)
			}
			s.Errors = append(s.Errors, ev.Type+": "+msg)
		case "thread.started", "turn.started", "turn.completed":
			s.Kind = "codex"
		case "system", "assistant", "user", "result":
			s.Kind = "claude"
			var m struct {
				Content []struct {
					Type      string `json:"type"`
					ID        string `json:"id"`
					Name      string `json:"name"`
					ToolUseID string `json:"tool_use_id"`
					IsError   bool   `json:"is_error"`
					Input     struct {
						Command  string `json:"command"`
						FilePath string `json:"file_path"`
						Notebook string `json:"notebook_path"`
					} `json:"input"`
				} `json:"content"`
			}
			if json.Unmarshal(ev.Message, &m) != nil {
				continue
			}
			for _, c := range m.Content {
				switch {
				case c.Type == "tool_use" && c.Name == "Bash":
					claudeCmd[c.ID] = len(s.Commands)
					s.Commands = append(s.Commands, EventCommand{Command: c.Input.Command})
				case c.Type == "tool_use" && (c.Name == "Write" || c.Name == "Edit" || c.Name == "MultiEdit"):
					claudeCmd[c.ID] = -1
					addFile(c.Input.FilePath)
				case c.Type == "tool_use" && c.Name == "NotebookEdit":
					addFile(c.Input.Notebook)
				case c.Type == "tool_result":
					if i, ok := claudeCmd[c.ToolUseID]; ok && i >= 0 {
						s.Commands[i].Exit = "ok"
						if c.IsError {
							s.Commands[i].Exit = "failed or refused"
						}
					}
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		s.Cut = "the summary stops at an unreadable line: " + err.Error()
		if errors.Is(err, bufio.ErrTooLong) {
			s.Cut = fmt.Sprintf("the summary stops at an event line over %d MiB", eventLineMax>>20)
		}
	}
	return s
}

// AllCommandsFailed reports whether the agent ran commands and every one
// whose end is known failed (a non-zero exit, failed, declined or
// refused): work that says done on such a run did not get far.
func (s *EventSummary) AllCommandsFailed() bool {
	if s == nil {
		return false
	}
	known := 0
	for _, c := range s.Commands {
		switch {
		case c.Exit == "" || c.Exit == "ok" || c.Exit == "exit 0":
			if c.Exit != "" {
				return false
			}
		case strings.HasPrefix(c.Exit, "exit "), c.Exit == "failed", c.Exit == "declined", c.Exit == "failed or refused":
			known++
		}
	}
	return known > 0
}
