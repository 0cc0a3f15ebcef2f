package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
)

// Answer is a person's answer to a task's question (`runner answer`):
// what the task was blocked on when it was given, the answer, and when.
// Every later prompt of the task carries it.
type Answer struct {
	Question string    `json:"question,omitempty"`
	Answer   string    `json:"answer"`
	At       time.Time `json:"at"`
}

// answersLimit bounds answers.json when it is read.
const answersLimit = 4 << 20

// LoadAnswers reads state/answers.json: the answers by task id. A missing
// file is no answer.
func LoadAnswers(p Paths) (map[string][]Answer, error) {
	data, err := fsutil.ReadLimited(p.Answers(), answersLimit, true)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string][]Answer{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string][]Answer{}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", p.Rel(p.Answers()), err)
	}
	return out, nil
}

// AddAnswer adds a to the answers of task id, durably.
func AddAnswer(p Paths, id string, a Answer) error {
	all, err := LoadAnswers(p)
	if err != nil {
		return err
	}
	all[id] = append(all[id], a)
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	if err := fsutil.MkdirAll(p.StateDir(), 0o755); err != nil {
		return err
	}
	return fsutil.ReplaceFile(p.Answers(), append(data, '\n'), 0o644, fsutil.Durable)
}
