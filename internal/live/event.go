package live

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// WorkerEventFile holds, in the run folder of an iteration on a worker,
// the latest event of its agent the worker reported.
const WorkerEventFile = "worker_event.txt"

// tailBytes is how much of the end of an events file is read for its
// latest event.
const tailBytes = 32 << 10

// LatestEvent describes the last event an agent's CLI streamed to the
// events file at path (codex's --json items, claude's stream-json tool
// uses) in a few words: "running go test ./...", "editing calc.go".
// Unknown events are passed over; "" when none is known yet (no file,
// the command preset, an empty stream).
//
// An iteration on a worker (SPEC §22) has no events file on the
// coordinator until it ends: its latest event, as the worker's heartbeat
// carries it, is in WorkerEventFile beside it.
func LatestEvent(path string) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		data, _ := os.ReadFile(filepath.Join(filepath.Dir(path), WorkerEventFile))
		return strings.TrimSpace(string(data))
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return ""
	}
	from := max(0, size-tailBytes)
	buf := make([]byte, size-from)
	if _, err := f.ReadAt(buf, from); err != nil && err != io.EOF {
		return ""
	}
	lines := bytes.Split(buf, []byte{'\n'})
	if from > 0 && len(lines) > 0 {
		lines = lines[1:] // the first is cut
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if d := describe(lines[i]); d != "" {
			return d
		}
	}
	return ""
}

// event is the part of a codex or claude event read here.
type event struct {
	Type string `json:"type"`
	Item *struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		Changes []struct {
			Path string `json:"path"`
		} `json:"changes"`
	} `json:"item"`
	Message *struct {
		Content []struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Input struct {
				Command  string `json:"command"`
				FilePath string `json:"file_path"`
			} `json:"input"`
		} `json:"content"`
	} `json:"message"`
}

// describe says what one event line shows the agent doing; "" for an
// event that says nothing of it.
func describe(line []byte) string {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return ""
	}
	var e event
	if json.Unmarshal(line, &e) != nil {
		return ""
	}
	if it := e.Item; it != nil && strings.HasPrefix(e.Type, "item.") {
		switch it.Type {
		case "command_execution":
			return "running " + it.Command
		case "file_change":
			var paths []string
			for _, c := range it.Changes {
				paths = append(paths, c.Path)
			}
			return "editing " + strings.Join(paths, ", ")
		case "agent_message":
			return "writing its answer"
		case "reasoning":
			return "thinking"
		}
	}
	if e.Type == "assistant" && e.Message != nil {
		for i := len(e.Message.Content) - 1; i >= 0; i-- {
			c := e.Message.Content[i]
			switch {
			case c.Type == "tool_use" && c.Input.Command != "":
				return "running " + c.Input.Command
			case c.Type == "tool_use" && c.Input.FilePath != "":
				return strings.ToLower(c.Name) + " " + c.Input.FilePath
			case c.Type == "tool_use":
				return "using " + c.Name
			case c.Type == "text":
				return "writing its answer"
			}
		}
	}
	return ""
}
