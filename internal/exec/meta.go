package executor

import "github.com/runner-cli/runner/internal/state"

// NoteRun records an agent run in meta: meta.Agent describes it (keeping
// the rate limits earlier runs of the iteration hit), and meta.Usage adds
// what it reported.
func NoteRun(meta *state.Meta, res *Result) {
	var limits []state.RateLimitMeta
	if meta.Agent != nil {
		limits = meta.Agent.RateLimits
	}
	meta.Agent = AgentMeta(res, limits)
	if res.Usage != nil {
		if meta.Usage == nil {
			meta.Usage = &state.Usage{}
		}
		meta.Usage.Add(*res.Usage)
	}
}

// AgentMeta is meta.json's record of an agent run, keeping the rate
// limits earlier runs of the iteration hit.
func AgentMeta(res *Result, limits []state.RateLimitMeta) *state.AgentMeta {
	return &state.AgentMeta{
		Argv: res.Argv, ExitCode: res.ExitCode, Class: res.Class,
		DurationMS: res.Duration.Milliseconds(), Error: res.Error,
		MessageSource: res.MessageSource, MessageError: res.MessageError, LogTail: res.LogTail,
		Evidence: res.Evidence, Failed: res.AgentFailed, PermissionDenials: res.PermissionDenials, RateLimits: limits,
		Recovered: res.Recovered,
	}
}
