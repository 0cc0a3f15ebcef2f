package config

import (
	"reflect"
	"time"
)

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
	// DefaultMaxProcesses is sandbox.max_processes: room enough for a
	// CLI, a build and its tests (threads count), not for a flood.
	DefaultMaxProcesses  = 512
	DefaultGitTimeout    = 30 * time.Second
	DefaultMaxRejections = 2
	DefaultOnError       = OnErrorWait
)

// The run branch's way back (SPEC §23): the remote `runner finish --pr`
// pushes to, and how many refs of each kind under refs/runner/ are kept,
// for how long (30 days).
const (
	DefaultRemote      = "origin"
	DefaultKeepRefs    = 100
	DefaultKeepRefsAge = 30 * 24 * time.Hour
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

// DefaultReviewArgs returns the extra arguments a [review] preset gets
// when the config does not set review.args: the reviewer may read, never
// change (whatever it changes is reverted anyway, and fails the review):
//
//   - codex: --sandbox read-only.
//   - claude: --disallowedTools Bash Edit Write MultiEdit NotebookEdit
//     (it reads with Read, Grep and Glob; no shell, no edit tool).
//   - command and unknown presets: none.
func DefaultReviewArgs(preset string) []string {
	switch preset {
	case PresetCodex:
		return []string{"--sandbox", "read-only"}
	case PresetClaude:
		return []string{"--disallowedTools", "Bash", "Edit", "Write", "MultiEdit", "NotebookEdit"}
	}
	return nil
}

// defaultExecutor is an executor table with every key at its default.
func defaultExecutor(args func(string) []string) Executor {
	return Executor{
		Name:        DefaultPreset,
		Preset:      DefaultPreset,
		Args:        args(DefaultPreset),
		Timeout:     Duration{DefaultTimeout},
		KillGrace:   Duration{DefaultKillGrace},
		OutputLimit: DefaultOutputLimit,

		RateLimitPatterns: append([]string(nil), DefaultRateLimitPatterns...),
	}
}

// Default returns the configuration used for every key a file leaves out.
func Default() *Config {
	return &Config{
		Executor: defaultExecutor(DefaultArgs),
		Review:   Review{Executor: defaultExecutor(DefaultReviewArgs), MaxRejections: DefaultMaxRejections, OnError: DefaultOnError},
		Prompt:   Prompt{Budget: DefaultBudget},
		Loop: Loop{
			MaxIterations: DefaultMaxIterations,
			MaxAttempts:   DefaultMaxAttempts,
			OnBlocked:     DefaultOnBlocked,
			MaxWait:       Duration{DefaultMaxWait},

			MaxConsecutiveErrors: DefaultMaxConsecErrors,
			Parallel:             1,
			RateLimitBackoff:     Duration{DefaultBackoff},
			RateLimitBackoffMax:  Duration{DefaultBackoffMax},
		},
		Scrub:   Scrub{Enabled: true},
		Git:     Git{Checkpoint: true, Branch: DefaultRunBranch, Worktree: true, SetupTimeout: Duration{DefaultSetupTimeout}, Timeout: Duration{DefaultGitTimeout}, FollowBase: true, Remote: DefaultRemote, KeepRefs: KeepRefs{Count: DefaultKeepRefs, Age: Duration{DefaultKeepRefsAge}}},
		Verify:  Verify{Preflight: true, EmptyDone: EmptyDoneNote},
		Sandbox: Sandbox{Mode: SandboxAuto, MaxProcesses: DefaultMaxProcesses},
	}
}

// fillDefaults gives a decoded Config the defaults that depend on what
// the file says; set reports whether the file set the field a pointer
// points to.
func fillDefaults(c *Config, set func(field any) bool) {
	fillExecutor(&c.Executor, set, DefaultArgs)
	for i := range c.Fallbacks {
		// A [[fallback]] starts from nothing: every key it leaves out
		// takes its default, as in [executor] (not [executor]'s value).
		f := reflect.ValueOf(&c.Fallbacks[i]).Elem()
		def := reflect.ValueOf(defaultExecutor(DefaultArgs))
		for j := range f.NumField() {
			if !set(f.Field(j).Addr().Interface()) {
				f.Field(j).Set(def.Field(j))
			}
		}
		fillExecutor(&c.Fallbacks[i], set, DefaultArgs)
	}
	c.Review.Enabled = set(&c.Review)
	if set(&c.Engine) {
		fillEngine(&c.Engine, set)
	}
	fillExecutor(&c.Review.Executor, set, DefaultReviewArgs)
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

// fillExecutor gives an executor table the defaults that depend on what
// the file says: its name and args follow its preset, its cached input
// price its input price (in price and in the older prices).
func fillExecutor(e *Executor, set func(field any) bool, args func(string) []string) {
	if !set(&e.Name) {
		e.Name = e.Preset
	}
	if !set(&e.Args) {
		e.Args = args(e.Preset)
	}
	if !set(&e.Prices.CachedInput) {
		e.Prices.CachedInput = e.Prices.Input
	}
	if !set(&e.Price.CachedInputPerMTok) {
		e.Price.CachedInputPerMTok = e.Price.InputPerMTok
	}
}

// fillEngine gives an [engine] table its defaults.
func fillEngine(e *Engine, set func(field any) bool) {
	if !set(&e.Kind) {
		e.Kind = EngineTemporal
	}
	if !set(&e.Namespace) {
		e.Namespace = "default"
	}
	if !set(&e.TaskQueue) {
		e.TaskQueue = "runner"
	}
	if !set(&e.Parallel) {
		e.Parallel = 4
	}
	if !set(&e.Heartbeat) {
		e.Heartbeat = Duration{DefaultEngineHeartbeat}
	}
}

// DefaultEngineHeartbeat is how long a worker may be silent before its
// iteration counts as interrupted.
const DefaultEngineHeartbeat = 30 * time.Second

// MaxParallel bounds loop.parallel: each slot is a worktree and an agent.
const MaxParallel = 16
