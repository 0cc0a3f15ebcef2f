package scrub

import (
	"fmt"
	"os"

	"github.com/runner-cli/runner/internal/config"
)

// ForConfig builds the scrubber of a repository's config.toml: its
// [scrub] table, and the values of secret-looking variables in the
// runner's environment and in the agent's (executor.env).
func ForConfig(cfg *config.Config) (*Scrubber, error) {
	environ := os.Environ()
	for k, v := range cfg.Executor.Env {
		environ = append(environ, k+"="+v)
	}
	extra := make([]UserRule, 0, len(cfg.Scrub.Rules))
	for _, r := range cfg.Scrub.Rules {
		extra = append(extra, UserRule{Name: r.Name, Regex: r.Regex})
	}
	s, err := New(Options{Enabled: cfg.Scrub.Enabled, Extra: extra, Allow: cfg.Scrub.Allow, Environ: environ})
	if err != nil {
		return nil, fmt.Errorf("config [scrub]: %w", err)
	}
	return s, nil
}
