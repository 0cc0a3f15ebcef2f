package executor

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/runner-cli/runner/internal/strictjson"
)

// Verdicts a reviewer may give (SPEC §17).
const (
	VerdictApprove = "approve"
	VerdictReject  = "reject"
)

// Verdict is a reviewer's final message: approve or reject, with its
// reasons.
type Verdict struct {
	Verdict string   `json:"verdict"`
	Reasons []string `json:"reasons,omitempty"`
}

// ReviewSchema is the JSON Schema of a reviewer's final message, written
// to .runner/state/review.schema.json and given to the reviewer as
// OutputSchema is to the agent (OpenAI strict structured output rules).
const ReviewSchema = `{
  "title": "runner review verdict",
  "type": "object",
  "additionalProperties": false,
  "required": ["verdict", "reasons"],
  "properties": {
    "verdict": {
      "type": "string",
      "enum": ["approve", "reject"],
      "description": "approve: the change meets the task's goal and acceptance, honestly; reject: it does not"
    },
    "reasons": {
      "type": "array",
      "items": {"type": "string"},
      "description": "Why; for reject, each thing the next attempt must fix, concretely"
    }
  }
}
`

// verdictMaxDepth bounds the nesting of a verdict.
const verdictMaxDepth = 8

// ParseVerdict parses and checks a reviewer's final message strictly: one
// JSON object, no duplicate or unknown fields, verdict approve or reject,
// reasons a list of strings (null accepted) of which a rejection has at
// least one that is not blank: the next attempt is told them. Blank
// reasons are dropped.
func ParseVerdict(data []byte) (*Verdict, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("verdict is empty")
	}
	if trimmed[0] != '{' {
		return nil, errors.New("verdict is not a JSON object")
	}
	var v Verdict
	if err := strictjson.Decode(trimmed, &v, verdictMaxDepth); err != nil {
		return nil, fmt.Errorf("verdict: %v", err)
	}
	v.Reasons = nonBlank(v.Reasons)
	switch v.Verdict {
	case VerdictApprove:
	case VerdictReject:
		if len(v.Reasons) == 0 {
			return nil, errors.New(`verdict: "reject" needs at least one reason, for the next attempt to act on`)
		}
	case "":
		return nil, errors.New(`verdict: "verdict" is missing; want approve or reject`)
	default:
		return nil, fmt.Errorf("verdict: %q is not approve or reject", v.Verdict)
	}
	for i, r := range v.Reasons {
		v.Reasons[i] = strings.TrimSpace(r)
	}
	return &v, nil
}

func parseVerdict(data []byte) (any, error) {
	v, err := ParseVerdict(data)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// StartError is Run's error when the executor's program could not be
// started at all: a bad preset or command, a program missing or not
// executable, an exec that failed. Such an executor is set aside for the
// run (SPEC §17); it costs the task no attempt.
type StartError struct {
	Err error
}

func (e *StartError) Error() string { return e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }
