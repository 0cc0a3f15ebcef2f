package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
)

// Journal events.
const (
	EventStarted     = "started"
	EventAgentDone   = "agent_done"
	EventGuardsDone  = "guards_done"
	EventRecorded    = "recorded"
	EventInterrupted = "interrupted"
	EventReset       = "reset"
	EventAborted     = "aborted" // the agent could not be started; no attempt spent
)

// Record is one line of journal.jsonl.
type Record struct {
	Time        time.Time `json:"time"`
	Iteration   int       `json:"iteration,omitempty"`
	Node        string    `json:"node,omitempty"`
	Event       string    `json:"event"`
	Phase       string    `json:"phase,omitempty"`
	AgentClass  string    `json:"agent_class,omitempty"`
	AgentStatus string    `json:"agent_status,omitempty"`
	Guard       string    `json:"guard,omitempty"`
	Outcome     string    `json:"outcome,omitempty"`
	NodeStatus  string    `json:"node_status,omitempty"`
	Attempts    int       `json:"attempts,omitempty"`
	Summary     string    `json:"summary,omitempty"`
	Error       string    `json:"error,omitempty"`
}

// AppendJournal appends one record and fsyncs the journal.
func AppendJournal(path string, r Record) error {
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode journal record: %w", err)
	}
	return fsutil.AppendSync(path, append(line, '\n'))
}

// ReadJournal reads every complete record. A torn last line (a crash in
// the middle of an append) is ignored; a damaged line elsewhere is an
// error naming its line number.
func ReadJournal(path string) ([]Record, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Record
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	lineNo := 0
	complete := len(data) > 0 && data[len(data)-1] == '\n'
	lines := bytes.Count(data, []byte{'\n'})
	for sc.Scan() {
		lineNo++
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			if lineNo > lines || (!complete && lineNo == lines+1) {
				break // torn last line
			}
			return out, fmt.Errorf("read %s: line %d: %v", path, lineNo, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}
