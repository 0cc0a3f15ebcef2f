package config

import (
	"fmt"
	"os"

	"github.com/runner-cli/runner/internal/scrub"
)

// Scrubber builds the secret scrubber of this configuration: its [scrub]
// table, and the values of secret-looking variables in the runner's
// environment and in the agent's (executor.env).
func (c *Config) Scrubber() (*scrub.Scrubber, error) {
	environ := os.Environ()
	for k, v := range c.Executor.Env {
		environ = append(environ, k+"="+v)
	}
	extra := make([]scrub.UserRule, 0, len(c.Scrub.Rules))
	for _, r := range c.Scrub.Rules {
		extra = append(extra, scrub.UserRule{Name: r.Name, Regex: r.Regex})
	}
	s, err := scrub.New(scrub.Options{Enabled: c.Scrub.Enabled, Extra: extra, Allow: c.Scrub.Allow, Environ: environ})
	if err != nil {
		return nil, fmt.Errorf("config [scrub]: %w", err)
	}
	return s, nil
}
