package executor

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/lazyregexp"
	"github.com/runner-cli/runner/internal/proc"
)

// ClassRateLimited is the class of a run that hit a usage or rate limit:
// the loop waits and runs the agent again without spending an attempt.
const ClassRateLimited = "rate_limited"

// verdict is the classification of one run.
type verdict struct {
	class    string
	reason   string     // why the class is not ok
	evidence string     // what the classification rests on
	failed   bool       // the agent itself failed (see Result.AgentFailed)
	resetAt  *time.Time // when a usage limit resets, if the agent said
}

// clue is one piece of text the agent printed about a failure, with where
// it came from.
type clue struct {
	source string // "codex turn.failed", "claude result", "stderr", ...
	text   string
}

func (c clue) String() string { return c.source + ": " + c.text }

// classify decides the class of a run from the way it ended (exit status,
// signal, the runner's own deadlines), the Claude result event, the Codex
// event stream, the lines the agent printed outside its JSON events
// (stderrLines, oldest first) and the message lookup.
func classify(o Options, pr proc.Result, f found, cx codexStream, stderrLines []string) verdict {
	// For a run the runner's deadline ended, the last thing the agent said:
	// Codex reports a lost connection as error events ("Reconnecting...
	// waiting for network") on stdout, other agents print on stderr.
	last := lastClue(stderrLines)
	if cx.LastError != "" {
		last = "codex error: " + excerptString(cx.LastError, 300)
	}
	switch {
	case pr.Canceled:
		return verdict{class: ClassInterrupted, reason: "the runner was interrupted; the agent's process group was stopped"}
	case pr.TimedOut:
		return verdict{class: ClassTimeout, failed: true, evidence: last,
			reason: fmt.Sprintf("agent timed out after %s; its process group was killed", o.Timeout)}
	case pr.Idle:
		return verdict{class: ClassIdle, failed: true, evidence: last,
			reason: fmt.Sprintf("agent printed nothing for %s; its process group was killed", o.IdleTimeout)}
	}

	// What the agent itself reported, most specific first.
	var clues []clue
	var reported string
	if cx.Failure != "" {
		c := clue{"codex " + cx.FailureEvent, cx.Failure}
		clues = append(clues, c)
		reported = "codex reported an error (" + cx.FailureEvent + "): " + excerptString(cx.Failure, 300)
	}
	c := f.claude
	claudeFailed := c != nil && (c.IsError || (c.Subtype != "" && c.Subtype != "success"))
	if claudeFailed {
		text := strings.Join(c.Errors, "; ")
		if c.Result != nil && strings.TrimSpace(*c.Result) != "" {
			text = *c.Result
		}
		desc := fmt.Sprintf("subtype %q, is_error %t", c.Subtype, c.IsError)
		if c.APIErrorStatus != 0 {
			desc += fmt.Sprintf(", api_error_status %d", c.APIErrorStatus)
		}
		clues = append(clues, clue{"claude result (" + desc + ")", text})
		if reported == "" {
			reported = "claude reported an error (" + desc + ")"
			if strings.TrimSpace(text) != "" {
				reported += ": " + excerptString(text, 300)
			}
		}
	}
	exitFailed := pr.Signal != "" || pr.ExitCode != 0
	failed := reported != "" || exitFailed
	if !failed {
		if f.err != nil {
			return verdict{class: ClassAgentError, reason: "agent gave no valid final message: " + f.err.Error()}
		}
		return verdict{class: ClassOK}
	}
	for i := len(stderrLines) - 1; i >= 0; i-- {
		clues = append(clues, clue{"stderr", stderrLines[i]})
	}

	v := verdict{class: ClassAgentError, failed: true}
	switch {
	case c != nil && c.APIErrorStatus == 429:
		v.class, v.evidence = ClassRateLimited, clues[0].String()
	default:
		if m, ok := matchRateLimit(o.RateLimitPatterns, clues); ok {
			v.class, v.evidence = ClassRateLimited, m.String()
		}
	}
	if v.class == ClassRateLimited {
		now := time.Now()
		if o.Now != nil {
			now = o.Now()
		}
		// The line that matched says most; any other clue may carry the time.
		for _, cl := range append([]clue{{text: v.evidence}}, clues...) {
			if t, ok := ParseResetTime(cl.text, now); ok {
				v.resetAt = &t
				break
			}
		}
		v.reason = "the agent hit a usage or rate limit: " + excerptString(v.evidence, 300)
		return v
	}

	if cl, kind, ok := matchUnavailable(c, clues); ok {
		v.class, v.evidence = ClassUnavailable, cl.String()
		v.reason = unavailablePrefix[kind] + ": " + excerptString(cl.text, 300)
		return v
	}

	exit := ""
	switch {
	case pr.Signal != "":
		exit = "agent was killed by " + pr.Signal
	case pr.ExitCode != 0:
		exit = fmt.Sprintf("agent exited with status %d", pr.ExitCode)
	}
	switch {
	case reported != "" && exit != "":
		v.reason = reported + " (" + exit + ")"
	case reported != "":
		v.reason = reported
	default:
		v.reason = exit
	}
	if len(clues) > 0 {
		v.evidence = clues[0].String()
		if reported == "" {
			// Only stderr lines: the last that reads like an error says
			// more than a usage hint printed after it.
			for _, c := range clues {
				if errorLine.MatchString(c.text) && !backtraceFrame.MatchString(c.text) {
					v.evidence = c.String()
					break
				}
			}
		}
	}
	return v
}

// errorLine recognises a line that reports an error.
var errorLine = lazyregexp.New(`(?i)\berror\b|\bfail|\bdenied\b|not found|\bunable\b|\bcannot\b|\binvalid\b|\brefused\b|unauthori[sz]ed|forbidden|not logged in|\bunexpected\b|\bunknown\b`)

// backtraceFrame recognises a line of a backtrace ("13: <unknown>",
// "at main (/x.js:1:2)"), which names no error of its own.
var backtraceFrame = lazyregexp.New(`^\s*(\d+: |at )`)

// matchRateLimit returns the first clue a pattern matches.
func matchRateLimit(patterns []*regexp.Regexp, clues []clue) (clue, bool) {
	for _, c := range clues {
		for _, re := range patterns {
			if re.MatchString(c.text) {
				return c, true
			}
		}
	}
	return clue{}, false
}

// lastClue is the last line the agent printed outside its events, as
// evidence for a run the runner's deadline ended.
func lastClue(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return "last line printed: " + excerptString(lines[len(lines)-1], 300)
}

// outsideLines returns the non-empty lines of log output that are not JSON
// objects (for the codex and claude presets, whose stdout is JSON events,
// that is what they printed on stderr), at most max of the last ones.
func outsideLines(log string, preset string, max int) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if preset != PresetCommand && strings.HasPrefix(line, "{") {
			continue
		}
		out = append(out, line)
	}
	if len(out) > max {
		out = out[len(out)-max:]
	}
	return out
}

// excerptString is excerpt without the quotes.
func excerptString(s string, n int) string {
	return shorten(string(bytes.TrimSpace([]byte(s))), n)
}
