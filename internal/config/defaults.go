package config

import "time"

// Defaults applied to keys a file does not set.
const (
	DefaultPreset           = PresetCodex
	DefaultTimeout          = 30 * time.Minute
	DefaultKillGrace        = 10 * time.Second
	DefaultOutputLimit      = 8 * MiB
	DefaultGuardTimeout     = 10 * time.Minute
	DefaultGuardOutputLimit = 1 * MiB
	DefaultBudget           = 40 * KiB
	DefaultMaxIterations    = 100
	DefaultMaxAttempts      = 3
	DefaultOnBlocked        = OnBlockedStop
	DefaultMaxWait          = 6 * time.Hour
	DefaultMaxConsecErrors  = 3
	DefaultBackoff          = time.Minute
	DefaultBackoffMax       = 30 * time.Minute
	DefaultRunBranch        = "runner/{root}"
	DefaultSetupTimeout     = 30 * time.Minute
)

// DefaultRateLimitPatterns are the regular expressions (Go syntax) that
// mark a failed agent run as hitting a usage or rate limit when
// executor.rate_limit_patterns is not set. They are matched against the
// agent's error events, its Claude result text and the lines it printed
// outside its JSON event stream, and only when the run failed.
var DefaultRateLimitPatterns = []string{
	`(?i)too many requests`,
	`(?i)(http|status|error|code)\W{0,3}429\b`,
	`(?i)rate[ _-]?limit`,
	`(?i)usage limit`,
	`(?i)(hit|reached) your (\S+ ){0,2}limit`,
	`(?i)quota`,
	`(?i)resource[ _]exhausted`,
}

// DefaultArgs returns the extra arguments a preset gets when the config
// does not set executor.args. They keep the agent sandboxed while letting
// it edit files and run commands:
//
//   - codex: --sandbox workspace-write (the working tree is writable; .git
//     and $HOME are not).
//   - claude: --permission-mode acceptEdits --allowedTools Bash (edits are
//     accepted and shell commands are allowed without a prompt).
//   - command and unknown presets: none.
func DefaultArgs(preset string) []string {
	switch preset {
	case PresetCodex:
		return []string{"--sandbox", "workspace-write"}
	case PresetClaude:
		return []string{"--permission-mode", "acceptEdits", "--allowedTools", "Bash"}
	}
	return nil
}

// Default returns the configuration used for every key a file leaves out.
func Default() *Config {
	return &Config{
		Executor: Executor{
			Preset:      DefaultPreset,
			Args:        DefaultArgs(DefaultPreset),
			Timeout:     Duration{DefaultTimeout},
			KillGrace:   Duration{DefaultKillGrace},
			OutputLimit: DefaultOutputLimit,

			RateLimitPatterns: append([]string(nil), DefaultRateLimitPatterns...),
		},
		Prompt: Prompt{Budget: DefaultBudget},
		Loop: Loop{
			MaxIterations: DefaultMaxIterations,
			MaxAttempts:   DefaultMaxAttempts,
			OnBlocked:     DefaultOnBlocked,
			MaxWait:       Duration{DefaultMaxWait},

			MaxConsecutiveErrors: DefaultMaxConsecErrors,
			RateLimitBackoff:     Duration{DefaultBackoff},
			RateLimitBackoffMax:  Duration{DefaultBackoffMax},
		},
		Scrub:  Scrub{Enabled: true},
		Git:    Git{Checkpoint: true, Branch: DefaultRunBranch, SetupTimeout: Duration{DefaultSetupTimeout}},
		Verify: Verify{Preflight: true},
	}
}

// fillDefaults gives a decoded Config the defaults that depend on what
// the file says; set reports whether the file set the field a pointer
// points to.
func fillDefaults(c *Config, set func(field any) bool) {
	e := &c.Executor
	if !set(&e.Args) {
		e.Args = DefaultArgs(e.Preset)
	}
	if !set(&e.Prices.CachedInput) {
		e.Prices.CachedInput = e.Prices.Input
	}
	for i := range c.Guards {
		g := &c.Guards[i]
		if !set(&g.Timeout) {
			g.Timeout = Duration{DefaultGuardTimeout}
		}
		if !set(&g.OutputLimit) {
			g.OutputLimit = DefaultGuardOutputLimit
		}
	}
}
