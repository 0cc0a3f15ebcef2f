package loop

import (
	"regexp"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
)

// optionsFor returns the options of executor e, compiling its rate limit
// patterns only once per list.
func (r *Runner) optionsFor(e config.Executor) executor.Options {
	key := strings.Join(e.RateLimitPatterns, "\x00")
	patterns, ok := r.cache.patterns[key]
	if !ok {
		if r.cache.patterns == nil {
			r.cache.patterns = map[string][]*regexp.Regexp{}
		}
		patterns = executor.CompilePatterns(e.RateLimitPatterns)
		r.cache.patterns[key] = patterns
	}
	o := executor.OptionsFrom(e, patterns)
	o.Now = rateLimitClock
	return o
}

// optionsNamed returns the options of the executor of the chain named
// name (an iteration's meta.Executor), or of [executor] when the chain
// has none by that name.
func (r *Runner) optionsNamed(name string) executor.Options {
	for _, e := range r.cfg.Chain() {
		if e.Label() == name {
			return r.optionsFor(e)
		}
	}
	return r.optionsFor(r.cfg.Executor)
}
