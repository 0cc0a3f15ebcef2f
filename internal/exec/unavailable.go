package executor

import (
	"strings"

	"github.com/runner-cli/runner/internal/lazyregexp"
)

// ClassUnavailable is the class of a run whose agent cannot work at all:
// its key refused (401, 403), not logged in, a model it does not have,
// its own setup broken. Every attempt would fail the same way, so the
// run spends none: it stops at once, quoting the agent, and says what to
// do (Unavailable).
const ClassUnavailable = "unavailable"

// Kinds of unavailability, for what to do about it.
const (
	UnavailableAuth  = "auth"  // the key is refused, or there is none, or not logged in
	UnavailableModel = "model" // the model does not exist or the account cannot use it
	UnavailableSetup = "setup" // the agent's own configuration is broken
)

// unavailablePatterns recognise, in what a failed run reported (the
// Codex turn.failed and error events, the Claude result, the last lines
// on stderr), an agent that cannot work, by kind. They follow what codex
// 0.169 and Claude Code 2.1 print for an HTTP 401, 403 or 404 of their
// API and when not logged in.
var unavailablePatterns = []struct {
	kind string
	re   *lazyregexp.Regexp
}{
	{UnavailableModel, lazyregexp.New(`(?i)model_not_found|model\b.{0,80}\b(does not exist|not found|not available|not supported)|issue with the selected model|(unknown|invalid|unsupported) model|does not have access to (the )?model|not_found_error.{0,40}model`)},
	{UnavailableAuth, lazyregexp.New(`(?i)\b401\b|unauthori[sz]ed|\b403\b|forbidden|invalid[ _-]?(x-)?api[ _-]?key|incorrect api key|api key (is )?(missing|not set|not found|invalid)|invalid_api_key|authentication[ _](error|failed)|failed to authenticate|not logged in|please (run )?/?login|run .?(codex|claude) login|permission_error|does not have permission to use|OPENAI_API_KEY|ANTHROPIC_API_KEY`)},
	{UnavailableSetup, lazyregexp.New(`(?i)error loading config|error finding codex home|cannot be used with root/sudo privileges`)},
}

// matchUnavailable returns the first clue that says the agent cannot
// work, and the kind; a Claude result with api_error_status 401, 403 or
// 404 says so by itself.
func matchUnavailable(c *claudeResult, clues []clue) (clue, string, bool) {
	if c != nil && len(clues) > 0 {
		switch c.APIErrorStatus {
		case 401, 403:
			return clues[0], UnavailableAuth, true
		case 404:
			return clues[0], UnavailableModel, true
		}
	}
	for _, cl := range clues {
		for _, p := range unavailablePatterns {
			if p.re.MatchString(cl.text) {
				return cl, p.kind, true
			}
		}
	}
	return clue{}, "", false
}

// UnavailableHint says what a person does about an agent that cannot
// work, by kind, for the preset (codex, claude, command).
func UnavailableHint(kind, preset string) string {
	switch kind {
	case UnavailableModel:
		return "choose a model the account can use (--model in executor.args) or check the provider's model name"
	case UnavailableSetup:
		return "fix the agent's own setup as its message says"
	}
	switch preset {
	case PresetCodex:
		return "log in with `codex login`, or give a valid OPENAI_API_KEY (in the runner's environment or executor.env)"
	case PresetClaude:
		return "log in with `claude` (then /login), or give a valid ANTHROPIC_API_KEY (in the runner's environment or executor.env)"
	}
	return "give the agent valid credentials (its API key or login)"
}

// UnavailableKind reads the kind back from a Result's Error ("" when the
// class is not ClassUnavailable).
func UnavailableKind(res *Result) string {
	if res == nil || res.Class != ClassUnavailable {
		return ""
	}
	for _, k := range []string{UnavailableModel, UnavailableSetup} {
		if strings.HasPrefix(res.Error, unavailablePrefix[k]) {
			return k
		}
	}
	return UnavailableAuth
}

// unavailablePrefix starts the Error of a run of each kind.
var unavailablePrefix = map[string]string{
	UnavailableAuth:  "the agent cannot work: its credentials were refused or it is not logged in",
	UnavailableModel: "the agent cannot work: its model does not exist or the account cannot use it",
	UnavailableSetup: "the agent cannot work: its setup is broken",
}

// UnavailableError ends a run whose agent cannot work
// (ClassUnavailable): its own words, and what to do.
type UnavailableError struct {
	Executor string // the executor's name
	Preset   string
	Kind     string // UnavailableAuth, UnavailableModel or UnavailableSetup
	Evidence string // what the agent said, with where it came from
}

// Unavailable is the error of a run whose agent cannot work.
func Unavailable(executorName, preset string, res *Result) *UnavailableError {
	return &UnavailableError{Executor: executorName, Preset: preset, Kind: UnavailableKind(res), Evidence: res.Evidence}
}

func (e *UnavailableError) Error() string {
	return "the agent (executor " + e.Executor + ") cannot work: " + strings.TrimRight(e.Evidence, ". ") + ". To go on: " + UnavailableHint(e.Kind, e.Preset) +
		"; `runner doctor` checks that each configured agent answers"
}
