// Package config loads and validates .runner/config.toml: which agent to
// run and how (executor), the guard commands that verify its work, the
// prompt budget, loop limits, secret scrubbing, git checkpoints and the
// webhooks notified. Every problem in a file
// is reported at once, each naming the file, the key and, where known, the
// line.
package config

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/notify"
	"github.com/runner-cli/runner/internal/state"
)

// Presets of [executor].preset.
const (
	PresetCodex   = "codex"
	PresetClaude  = "claude"
	PresetCommand = "command"
)

// Values of [loop].on_blocked.
const (
	OnBlockedStop     = "stop"
	OnBlockedContinue = "continue"
)

// Values of [review].on_error: what a review that fails (the reviewer
// errs, hangs, is rate limited or changes the work) means.
const (
	OnErrorWait   = "wait"   // ask the reviewer again; the task waits, no attempt spent
	OnErrorAccept = "accept" // record the task done, the review marked skipped
)

// MaxFileSize is the largest config file Load reads.
const MaxFileSize = 1 << 20

// Config is the whole of .runner/config.toml with defaults applied. The
// toml tag of each field is the key it is read from: a field with a tag,
// a default in Default, a rule in validate and a line in the example
// config.toml make a new key.
type Config struct {
	Executor Executor `toml:"executor"`
	// Fallbacks are the [[fallback]] executors, tried in order after
	// Executor when it is rate limited or set aside (SPEC §17).
	Fallbacks []Executor `toml:"fallback"`
	// Review is the executor that reviews finished work; off unless the
	// file has a [review] table (Review.Enabled).
	Review  Review  `toml:"review"`
	Guards  []Guard `toml:"guard"`
	Prompt  Prompt  `toml:"prompt"`
	Loop    Loop    `toml:"loop"`
	Scrub   Scrub   `toml:"scrub"`
	Git     Git     `toml:"git"`
	Verify  Verify  `toml:"verify"`
	Sandbox Sandbox `toml:"sandbox"`
	// Notify are the webhooks told of what a person should know while
	// the run goes on unattended (SPEC §15).
	Notify []notify.Target `toml:"notify"`
	// Engine, when set, runs the iterations on `runner worker` processes
	// through a Temporal service (SPEC §22); off without an [engine]
	// table.
	Engine Engine `toml:"engine"`
}

// Engine is where iterations run beyond this machine (SPEC §22).
type Engine struct {
	// Kind is "temporal"; empty (no [engine] table) runs every iteration
	// on this machine.
	Kind string `toml:"kind"`
	// Address is the Temporal frontend, host:port.
	Address string `toml:"address"`
	// Namespace and TaskQueue are where the iterations are submitted; the
	// workers poll the same task queue.
	Namespace string `toml:"namespace"`
	TaskQueue string `toml:"task_queue"`
	// Remote is the git remote the coordinator and the workers share: a
	// URL or a path (a bare repository on a shared disk).
	Remote string `toml:"remote"`
	// Parallel bounds the iterations in flight at once.
	Parallel int `toml:"parallel"`
	// Heartbeat is how long a worker may go without a heartbeat before its
	// iteration counts as interrupted (it beats a third of that).
	Heartbeat Duration `toml:"heartbeat"`
	// APIKey names an environment variable holding an API key (Temporal
	// Cloud); TLS is turned on with it, or by TLS.
	APIKeyEnv string `toml:"api_key_env"`
	TLS       bool   `toml:"tls"`
	// KeyFile is the file holding the secret the coordinator and the
	// workers sign what they exchange with (SPEC §22), kept outside every
	// room; RUNNER_ENGINE_KEY_FILE wins over it. Absolute, or "~/…".
	KeyFile string `toml:"key_file"`
}

// EngineTemporal is the one engine kind.
const EngineTemporal = "temporal"

// On says iterations run on workers.
func (e Engine) On() bool { return e.Kind != "" }

// Executor says which agent runs and under which limits.
type Executor struct {
	// Name labels the executor in logs, meta.json, the journal and
	// `runner status`; the default is its preset. Label gives it for an
	// Executor built in code without one.
	Name string `toml:"name"`
	// Preset is "codex", "claude" or "command".
	Preset string `toml:"preset"`
	// Bin overrides the program a preset runs ("codex", "claude").
	Bin string `toml:"bin"`
	// Args are extra arguments for a preset. When the file does not set
	// them, they are DefaultArgs(Preset).
	Args []string `toml:"args"`
	// Command is the argv run when Preset is "command"; the placeholders
	// {prompt_file}, {output_file}, {schema_file}, {iteration} and {node}
	// are substituted.
	Command []string `toml:"command"`
	// Timeout bounds one agent run.
	Timeout Duration `toml:"timeout"`
	// IdleTimeout stops an agent that prints nothing for this long; zero
	// turns the check off.
	IdleTimeout Duration `toml:"idle_timeout"`
	// KillGrace is the time between SIGTERM and SIGKILL, for the agent and
	// for guards.
	KillGrace Duration `toml:"kill_grace"`
	// OutputLimit bounds executor.log (head and tail are kept).
	OutputLimit Size `toml:"output_limit"`
	// Env holds extra environment variables for the agent.
	Env map[string]string `toml:"env"`
	// EnvDrop names environment variables removed from the agent's
	// environment.
	EnvDrop []string `toml:"env_drop"`
	// RateLimitPatterns are regular expressions (Go syntax) that mark a
	// failed run as rate_limited; unset means DefaultRateLimitPatterns.
	RateLimitPatterns []string `toml:"rate_limit_patterns"`
	// Price turns the tokens an agent reports into a cost (US dollars per
	// million tokens): the cost of agents that report none (Codex), and of
	// every agent while it works (Claude reports its cost only at its
	// end). Prices is its older spelling; Pricing gives whichever is set.
	Price  Price        `toml:"price"`
	Prices state.Prices `toml:"prices"`
}

// Price is executor.price: US dollars per million tokens.
type Price struct {
	InputPerMTok       float64 `toml:"input_per_mtok"`
	OutputPerMTok      float64 `toml:"output_per_mtok"`
	CachedInputPerMTok float64 `toml:"cached_input_per_mtok"`
}

// IsSet reports whether any price is set.
func (p Price) IsSet() bool {
	return p.InputPerMTok != 0 || p.OutputPerMTok != 0 || p.CachedInputPerMTok != 0
}

// Pricing is what the executor's tokens cost: executor.price, else the
// older executor.prices; unset (state.Prices.IsSet false) when neither
// is.
func (e Executor) Pricing() state.Prices {
	if e.Price.IsSet() {
		return state.Prices{Input: e.Price.InputPerMTok, CachedInput: e.Price.CachedInputPerMTok, Output: e.Price.OutputPerMTok}
	}
	return e.Prices
}

// Label is the executor's name, or its preset when it has none.
func (e Executor) Label() string {
	if e.Name != "" {
		return e.Name
	}
	return e.Preset
}

// Chain returns the executors an iteration may run on, in the order they
// are tried: [executor], then each [[fallback]].
func (c *Config) Chain() []Executor {
	return append([]Executor{c.Executor}, c.Fallbacks...)
}

// Review is [review] (SPEC §17): an executor with the keys of [executor]
// that reviews a task its agent says is done and its guards passed, and
// what its verdicts mean.
type Review struct {
	Executor `toml:",inline"`
	// MaxRejections is how many rejections a task takes before it is
	// blocked with the reviewer's reasons as its question.
	MaxRejections int `toml:"max_rejections"`
	// OnError is "wait" or "accept".
	OnError string `toml:"on_error"`
	// Enabled is set when the file has a [review] table.
	Enabled bool `toml:"-"`
}

// Guard is one verification command, run with sh -c in the repository root.
type Guard struct {
	Name        string   `toml:"name" json:"name"`
	Run         string   `toml:"run" json:"run"`
	Timeout     Duration `toml:"timeout" json:"timeout,omitzero"`
	OutputLimit Size     `toml:"output_limit" json:"output_limit,omitzero"`
	// Report names the test report the command produces (SPEC §18):
	// "go-json", "tap", "unittest" or "junit:PATH"; "" judges by the exit status alone.
	Report string `toml:"report" json:"report,omitempty"`
}

// Prompt holds the prompt pack settings.
type Prompt struct {
	// Budget is the most bytes the rendered prompt may take.
	Budget Size `toml:"budget"`
}

// Loop holds the limits of one `runner run`.
type Loop struct {
	// MaxIterations bounds the iterations of one `runner run` invocation.
	MaxIterations int `toml:"max_iterations"`
	// MaxAttempts is the attempt limit of nodes that set none.
	MaxAttempts int `toml:"max_attempts"`
	// OnBlocked is "stop" or "continue".
	OnBlocked string `toml:"on_blocked"`
	// MaxWait is the longest the runner waits out usage or rate limits in
	// one iteration; when a limit would need a longer wait, the run stops
	// (exit 1) without spending an attempt.
	MaxWait Duration `toml:"max_wait"`
	// MaxCostUSD stops the run once the summed cost reaches it; zero means
	// no limit.
	MaxCostUSD float64 `toml:"max_cost_usd"`
	// MaxTokens stops the run once the summed tokens reach it; zero means
	// no limit.
	MaxTokens int64 `toml:"max_tokens"`
	// TaskMaxCostUSD and TaskMaxTokens bound what each task may spend
	// over all its attempts (its reviewer's runs included); a node's own
	// max_cost_usd and max_tokens override them. Zero means no limit.
	// Like the run's caps they are enforced while the agent works (SPEC
	// §24, package spend).
	TaskMaxCostUSD float64 `toml:"task_max_cost_usd"`
	TaskMaxTokens  int64   `toml:"task_max_tokens"`
	// Escalate is the ladder of executors (names of [executor] and
	// [[fallback]]): a task's first attempt runs on the first, each later
	// attempt on the next, the last repeating; empty: every attempt runs
	// on the chain's first free executor. A node's executors override it.
	Escalate []string `toml:"escalate"`
	// MaxConsecutiveErrors stops the run (exit 1) after this many agent
	// runs in a row, across nodes, failed (not counting rate limits);
	// zero turns the check off.
	MaxConsecutiveErrors int `toml:"max_consecutive_errors"`
	// RateLimitBackoff is the first wait after a usage or rate limit that
	// names no reset time; each further wait doubles, up to
	// RateLimitBackoffMax. It is also the margin added to a reset time.
	RateLimitBackoff    Duration `toml:"rate_limit_backoff"`
	RateLimitBackoffMax Duration `toml:"rate_limit_backoff_max"`
	// KeepRuns bounds how many runs/NNNNNN/ folders are kept: after each
	// recorded iteration the oldest beyond this many are removed, never
	// the folder of the iteration just recorded. It also bounds the
	// journal, which is rotated into state/journal.1.jsonl past
	// max(4 MiB, KeepRuns × 4 KiB). Zero keeps them all.
	KeepRuns int `toml:"keep_runs"`
	// Parallel is how many tasks are worked on at once, each in a slot of
	// its own (SPEC §14); 1 works on one at a time. Above 1 it needs git
	// checkpoints.
	Parallel int `toml:"parallel"`
}

// Git configures the checkpoints (SPEC §12): a commit per finished task
// on a run branch, failed attempts kept under refs/runner/attempts/.
type Git struct {
	// Checkpoint turns checkpoints on (the default, inside a git
	// repository).
	Checkpoint bool `toml:"checkpoint"`
	// Branch is the run branch; {root} is the tree's root id.
	Branch string `toml:"branch"`
	// Worktree makes the agent and the guards work in a linked worktree
	// outside the checkout, which is then left untouched (the default,
	// SPEC §19); false works in the checkout itself, switched to the run
	// branch.
	Worktree bool `toml:"worktree"`
	// Setup are shell commands run once in a new worktree (npm ci, ...).
	Setup []string `toml:"setup"`
	// SetupTimeout bounds the setup commands together.
	SetupTimeout Duration `toml:"setup_timeout"`
	// Timeout bounds each of the runner's git commands. Work that git
	// cannot take as a tree in this time (an agent's 64 GiB output, a
	// million small files) fails its attempt, naming the largest paths.
	Timeout Duration `toml:"timeout"`

	// The run branch's way back (SPEC §23):
	// Base is the branch the run branch follows and `runner finish`
	// brings it onto; "": the branch the checkout was on when the run
	// branch was made, as recorded then.
	Base string `toml:"base"`
	// FollowBase merges the base into the run branch before the next
	// task when the base moved and the run has work of its own.
	FollowBase bool `toml:"follow_base"`
	// Remote is where `runner finish --pr` pushes the run branch: the
	// name of a remote of the repository, or a URL.
	Remote string `toml:"remote"`
	// KeepRefs bounds what the runner keeps under refs/runner/.
	KeepRefs KeepRefs `toml:"keep_refs"`
}

// KeepRefs bounds the refs the runner keeps under refs/runner/ (failed
// attempts, what the judges left, what was in the way, ...), each kind
// on its own: past Count of a kind, or older than Age, they are pruned.
// Zero is no bound.
type KeepRefs struct {
	Count int      `toml:"count"`
	Age   Duration `toml:"age"`
}

// Sandbox confines the agent, the guards and the reviewer (SPEC §19).
type Sandbox struct {
	// Mode is SandboxAuto (confine where the kernel can, and say so
	// where it cannot), SandboxRequired (refuse to run unconfined) or
	// SandboxOff.
	Mode string `toml:"mode"`
	// Writable are more directories the agent and the guards may write
	// (caches, tool state): absolute, or starting with "~/".
	Writable []string `toml:"writable"`
	// MaxProcesses bounds the processes (threads count) of each room: a
	// cgroup pids.max, or RLIMIT_NPROC in the room's user namespace
	// (package sandbox); 0 leaves them unbounded.
	MaxProcesses int `toml:"max_processes"`
}

// Sandbox modes.
const (
	SandboxAuto     = "auto"
	SandboxRequired = "required"
	SandboxOff      = "off"
)

// Verify keeps the verdict the runner's (SPEC §13).
type Verify struct {
	// Protect are globs of paths, relative to the repository root, the
	// agent may not change or delete (package verify: path.Match segments,
	// "**" for any number of folders, a folder protects what is below it).
	Protect []string `toml:"protect"`
	// Preflight runs the guards once on the untouched checkpoint before
	// the first agent of a run.
	Preflight bool `toml:"preflight"`
	// EmptyDone is what a "done" that changed nothing (git checkpoints)
	// is: EmptyDoneNote (an anomaly, said everywhere) or EmptyDoneFail (a
	// failed attempt).
	EmptyDone string `toml:"empty_done"`
}

// What verify.empty_done makes of a "done" that changed nothing.
const (
	EmptyDoneNote = "note"
	EmptyDoneFail = "fail"
)

// Scrub configures secret redaction in prompts.
type Scrub struct {
	// Enabled turns redaction on (the default).
	Enabled bool `toml:"enabled"`
	// Rules are redaction rules added to the built-in ones.
	Rules []ScrubRule `toml:"rules"`
	// Allow lists literal strings that are never redacted.
	Allow []string `toml:"allow"`
}

// ScrubRule redacts every match of Regex as [REDACTED:Name].
type ScrubRule struct {
	Name  string `toml:"name"`
	Regex string `toml:"regex"`
}

// Parse reads a config file's content on top of the defaults and validates
// the result. file names the file in error messages. When anything is
// wrong the error is an *Error holding every problem found.
func Parse(file string, data []byte) (*Config, error) {
	r := &report{file: file, data: data}
	cfg, ok := decode(r)
	if ok {
		r.validate(cfg)
	}
	if err := r.err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Load reads and parses the config file at path. A missing file is an
// error (matching fs.ErrNotExist) that says to run `runner init`.
func Load(path string) (*Config, error) {
	data, err := fsutil.ReadLimited(path, MaxFileSize, true)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("load config: %s: %w (run `runner init` to create it)", fsutil.DisplayPath(path), fs.ErrNotExist)
		}
		return nil, fmt.Errorf("load config: %w", err)
	}
	return Parse(fsutil.DisplayPath(path), data)
}
