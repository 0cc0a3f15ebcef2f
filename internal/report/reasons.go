package report

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/state"
)

// message is the part of the agent's final message the report shows.
type message struct {
	Questions []string `json:"questions"`
	Children  []struct {
		ID string `json:"id"`
	} `json:"children"`
}

// parseMessage reads the agent's message kept in meta.json; what does not
// decode is reported as an empty message.
func parseMessage(raw json.RawMessage) message {
	var m message
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &m)
	}
	return m
}

// failureReason says in one line why an attempt failed.
func failureReason(m *state.Meta) string {
	var why string
	switch {
	case len(m.Tamper) > 0:
		var paths []string
		for _, t := range m.Tamper {
			paths = append(paths, t.Path)
		}
		why = "the agent changed files it may not change: " + strings.Join(paths, ", ")
	case m.Review != nil && m.Review.Verdict == "reject":
		why = "the review rejected it" + suffix(": ", oneLine(strings.Join(m.Review.Reasons, "; ")))
	case m.Conflict != nil && m.Conflict.Kind == "guards":
		why = "its guards failed once integrated onto the run branch"
	case m.Conflict != nil:
		why = "its commit conflicted with the run branch" + suffix(": ", strings.Join(m.Conflict.Files, ", "))
	case m.Outcome == state.OutcomeGuardFailed:
		why = guardReason(m)
	case m.Outcome == state.OutcomeRetry:
		why = "the agent asked for another attempt" + suffix(": ", oneLine(m.Summary))
	case m.CostCap != nil:
		who := "its agent"
		if m.CostCap.By == "reviewer" {
			who = "its reviewer"
		}
		why = "the runner stopped " + who + " at a spend cap: " + m.CostCap.String()
	default:
		why = executorReason(m)
	}
	switch {
	case m.NodeStatus != "blocked":
	case m.CostCap != nil && m.CostCap.Scope == state.ScopeTask:
		why += " (the task is blocked at its spend cap)"
	default:
		why += " (attempts exhausted: the task is blocked)"
	}
	return why
}

// guardReason names the guards that did not pass.
func guardReason(m *state.Meta) string {
	var failed []string
	for i, gm := range append(append([]state.GuardMeta(nil), m.Guards...), m.Checks...) {
		kind := "guard"
		if i >= len(m.Guards) {
			kind = "check"
		}
		switch gm.Status {
		case "pass":
		case "timeout":
			failed = append(failed, fmt.Sprintf("%s %s timed out after %s", kind, gm.Name, time.Duration(gm.DurationMS)*time.Millisecond))
		default:
			s := fmt.Sprintf("%s %s failed (exit %d)", kind, gm.Name, gm.ExitCode)
			switch {
			case len(gm.Regressed) > 0:
				s = fmt.Sprintf("%s %s: %s", kind, gm.Name, oneLine(gm.Error))
			case gm.ExitCode <= 0 && gm.Error != "":
				s = fmt.Sprintf("%s %s failed: %s", kind, gm.Name, oneLine(gm.Error))
			}
			failed = append(failed, s)
		}
	}
	if len(failed) == 0 {
		return "a guard failed"
	}
	return strings.Join(failed, "; ")
}

// executorReason says why the agent's run was an executor error.
func executorReason(m *state.Meta) string {
	a := m.Agent
	switch {
	case a == nil:
		return "the agent did not run"
	case a.Error != "":
		return strings.TrimSuffix(oneLine(a.Error), "; last lines of executor.log:")
	case a.MessageError != "":
		return "no usable final message: " + oneLine(a.MessageError)
	case a.Class != "" && a.Class != "ok":
		return "the agent's run ended as " + a.Class
	}
	return "the agent's final message had no usable status"
}

// interruptReason is why an interrupted iteration was: the parenthesis of
// the summary the runner writes ("Iteration N was interrupted before it
// finished (why)."), or its first line.
func interruptReason(summary string) string {
	first := oneLine(summary)
	if i := strings.Index(first, "finished ("); i >= 0 {
		if j := strings.Index(first[i:], ")."); j >= 0 {
			return first[i+len("finished (") : i+j]
		}
	}
	return first
}
