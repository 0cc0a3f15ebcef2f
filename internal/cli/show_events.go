package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/state"
)

// Bounds of the events.jsonl summary `runner show` prints.
const (
	eventLineMax  = 16 << 20 // longer event lines end the summary
	shownCommands = 10
	shownFiles    = 20
)

// eventSummary is what `runner show` tells about an agent's event stream
// (runs/N/events.jsonl of the codex and claude presets).
type eventSummary struct {
	Events   int
	Kind     string // "codex", "claude" or "" when no event was recognised
	Commands []eventCommand
	Files    []string // changed files, in order, each once
	Errors   []string // Codex error and turn.failed messages
	Cut      string   // why the summary stopped early, if it did
}

type eventCommand struct {
	Command string
	Exit    string // "exit 0", "failed", "declined", "refused", "" when unknown
}

// summarizeEvents reads an events.jsonl: Codex items (command_execution,
// file_change, error events) or Claude tool uses (Bash commands; Write,
// Edit, MultiEdit and NotebookEdit files) and their results. It returns
// nil when the file does not exist.
func summarizeEvents(path string) *eventSummary {
	f, err := fsutil.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	s := &eventSummary{}
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
				c := eventCommand{Command: ev.Item.Command}
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
					s.Commands = append(s.Commands, eventCommand{Command: c.Input.Command})
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

// printEventSummary writes the events.jsonl summary lines of `runner show`.
func printEventSummary(w io.Writer, p state.Paths, runDir string) {
	s := summarizeEvents(filepath.Join(runDir, executor.EventsFileName))
	if s == nil {
		return
	}
	kind := ""
	if s.Kind != "" {
		kind = ", " + s.Kind
	}
	fmt.Fprintf(w, "events:   %d in %s%s\n", s.Events, executor.EventsFileName, kind)
	if len(s.Commands) > 0 {
		var parts []string
		for i, c := range s.Commands {
			if i == shownCommands {
				parts = append(parts, fmt.Sprintf("… and %d more", len(s.Commands)-i))
				break
			}
			part := oneLineCut(c.Command, 80)
			if c.Exit != "" {
				part += " (" + inert.Line(c.Exit) + ")"
			}
			parts = append(parts, part)
		}
		fmt.Fprintf(w, "commands: %d run: %s\n", len(s.Commands), strings.Join(parts, "; "))
	}
	if len(s.Files) > 0 {
		files := make([]string, len(s.Files))
		for i, f := range s.Files {
			files[i] = f
			if filepath.IsAbs(f) {
				files[i] = rel(p, f)
			}
		}
		more := ""
		if len(files) > shownFiles {
			more = fmt.Sprintf(", … and %d more", len(files)-shownFiles)
			files = files[:shownFiles]
		}
		fmt.Fprintf(w, "changed:  %d files: %s%s\n", len(s.Files), strings.Join(inert.Lines(files), ", "), more)
	}
	for _, e := range s.Errors {
		fmt.Fprintf(w, "event:    %s\n", oneLineCut(e, 200))
	}
	if s.Cut != "" {
		fmt.Fprintf(w, "events:   %s\n", inert.Line(s.Cut))
	}
}

// oneLineCut folds s onto one line (runs of spaces, tabs and newlines
// become one space), escapes the control characters left, and cuts the
// result to about n bytes.
func oneLineCut(s string, n int) string {
	s = inert.Line(strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }), " "))
	if len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
