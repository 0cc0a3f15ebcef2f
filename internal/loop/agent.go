package loop

import (
	"regexp"
	"strings"

	executor "github.com/runner-cli/runner/internal/exec"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/guard"
)

// executorOptions returns the options of the executor for the current
// config, compiling the rate limit patterns only when they changed.
func (r *Runner) executorOptions() executor.Options {
	key := strings.Join(r.cfg.Executor.RateLimitPatterns, "\x00")
	if r.cache.patterns == nil || r.cache.patternsKey != key {
		r.cache.patterns, r.cache.patternsKey = compilePatterns(r.cfg.Executor.RateLimitPatterns), key
	}
	return executorOptionsWith(r.cfg, r.cache.patterns)
}

// compilePatterns compiles rate limit patterns; config validation already
// refused any that does not compile.
func compilePatterns(list []string) []*regexp.Regexp {
	patterns := make([]*regexp.Regexp, 0, len(list))
	for _, p := range list {
		if re, err := regexp.Compile(p); err == nil {
			patterns = append(patterns, re)
		}
	}
	return patterns
}

func executorOptionsWith(cfg *config.Config, patterns []*regexp.Regexp) executor.Options {
	e := cfg.Executor
	return executor.Options{
		Preset: e.Preset, Bin: e.Bin, Args: e.Args, Command: e.Command,
		Timeout: e.Timeout.Duration, IdleTimeout: e.IdleTimeout.Duration, Grace: e.KillGrace.Duration,
		OutputLimit: int64(e.OutputLimit), Env: e.Env, EnvDrop: e.EnvDrop,
		RateLimitPatterns: patterns,
		Prices:            e.Prices,
		Now:               rateLimitClock,
	}
}

func guardSpecs(cfg *config.Config) []guard.Spec {
	specs := make([]guard.Spec, 0, len(cfg.Guards))
	for _, g := range cfg.Guards {
		specs = append(specs, guard.Spec{Name: g.Name, Run: g.Run, Timeout: g.Timeout.Duration, OutputLimit: int64(g.OutputLimit)})
	}
	return specs
}
