package config

import (
	"fmt"
	"os"
	"sort"

	"github.com/runner-cli/runner/internal/scrub"
)

// Scrubber builds the secret scrubber of this configuration: its [scrub]
// table, and the values of secret-looking variables in the runner's
// environment and in the agents' (the env of every executor of the
// chain, and the reviewer's).
func (c *Config) Scrubber() (*scrub.Scrubber, error) {
	environ := append(os.Environ(), c.AgentEnv()...)
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

// AgentEnv lists the variables config.toml gives the agents (every
// executor of the chain, and the reviewer), as NAME=value, sorted: their
// values are secrets to redact as the runner's own environment is.
func (c *Config) AgentEnv() []string {
	var env []string
	for _, e := range append(c.Chain(), c.Review.Executor) {
		for k, v := range e.Env {
			env = append(env, k+"="+v)
		}
	}
	sort.Strings(env)
	return env
}
