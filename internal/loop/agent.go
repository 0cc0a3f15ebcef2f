package loop

import (
	"strings"

	executor "github.com/runner-cli/runner/internal/exec"
)

// executorOptions returns the options of the executor for the current
// config, compiling the rate limit patterns only when they changed.
func (r *Runner) executorOptions() executor.Options {
	key := strings.Join(r.cfg.Executor.RateLimitPatterns, "\x00")
	if r.cache.patterns == nil || r.cache.patternsKey != key {
		r.cache.patterns, r.cache.patternsKey = executor.CompilePatterns(r.cfg.Executor.RateLimitPatterns), key
	}
	o := executor.OptionsFrom(r.cfg.Executor, r.cache.patterns)
	o.Now = rateLimitClock
	return o
}
