package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	runner "github.com/runner-cli/runner"
	"github.com/runner-cli/runner/internal/notify"
	"github.com/runner-cli/runner/internal/state"
)

const file = ".runner/config.toml"

// parseProblems parses src and returns its problems, failing when src is
// valid or the error is not an *Error.
func parseProblems(t *testing.T, src string) []Problem {
	t.Helper()
	cfg, err := Parse(file, []byte(src))
	if err == nil {
		t.Fatalf("Parse accepted the config (%+v); want an error", cfg)
	}
	var ce *Error
	if !errors.As(err, &ce) || len(ce.Problems) == 0 {
		t.Fatalf("Parse error %v (%T) is not an *Error with problems", err, err)
	}
	return ce.Problems
}

// wantProblem checks that src is refused with a problem of key, on line,
// in the config's file, whose message holds msg.
func wantProblem(t *testing.T, src string, line int, key, msg string) {
	t.Helper()
	probs := parseProblems(t, src)
	for _, p := range probs {
		if p.Key == key && strings.Contains(p.Msg, msg) {
			if p.Line != line {
				t.Fatalf("problem %q is on line %d, want %d", p.Error(), p.Line, line)
			}
			if p.File != file {
				t.Fatalf("problem %q names file %q, want %q", p.Error(), p.File, file)
			}
			return
		}
	}
	t.Fatalf("no problem for key %q containing %q; got:\n%v", key, msg, &Error{probs})
}

func mustParse(t *testing.T, src string) *Config {
	t.Helper()
	cfg, err := Parse(file, []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return cfg
}

func TestParseEmptyIsDefault(t *testing.T) {
	for _, src := range []string{"", "# only a comment\n", "[executor]\n[loop]\n"} {
		cfg := mustParse(t, src)
		if !reflect.DeepEqual(cfg, Default()) {
			t.Errorf("Parse(%q) = %+v, want the defaults %+v", src, cfg, Default())
		}
	}
}

func TestDefaultValues(t *testing.T) {
	c := Default()
	checks := []struct {
		name      string
		got, want any
	}{
		{"preset", c.Executor.Preset, "codex"},
		{"args", c.Executor.Args, []string{"--sandbox", "workspace-write"}},
		{"timeout", c.Executor.Timeout.Duration, 30 * time.Minute},
		{"idle_timeout", c.Executor.IdleTimeout.Duration, time.Duration(0)},
		{"kill_grace", c.Executor.KillGrace.Duration, 10 * time.Second},
		{"output_limit", c.Executor.OutputLimit, Size(8 << 20)},
		{"budget", c.Prompt.Budget, Size(40960)},
		{"max_iterations", c.Loop.MaxIterations, 100},
		{"max_attempts", c.Loop.MaxAttempts, 3},
		{"on_blocked", c.Loop.OnBlocked, "stop"},
		{"max_consecutive_errors", c.Loop.MaxConsecutiveErrors, 3},
		{"keep_runs", c.Loop.KeepRuns, 0},
		{"rate_limit_backoff", c.Loop.RateLimitBackoff.Duration, time.Minute},
		{"rate_limit_backoff_max", c.Loop.RateLimitBackoffMax.Duration, 30 * time.Minute},
		{"rate_limit_patterns", c.Executor.RateLimitPatterns, DefaultRateLimitPatterns},
		{"prices", c.Executor.Prices.IsSet(), false},
		{"scrub.enabled", c.Scrub.Enabled, true},
		{"guards", len(c.Guards), 0},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("default %s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Default().Validate() = %v", err)
	}
}

func TestParseAllKeys(t *testing.T) {
	src := `
[executor]
preset = "claude"
bin = "/opt/claude"
args = ["--model", "opus"]
timeout = "45m"
idle_timeout = "5m"
kill_grace = "3s"
output_limit = "2MB"
env = { GOCACHE = "/tmp/gc", IS_SANDBOX = "1" }
env_drop = ["OPENAI_API_KEY"]
rate_limit_patterns = ["slow down"]
prices = { input = 3, output = 15 }

[[fallback]]
name = "backup"
preset = "command"
command = ["agent", "{prompt_file}"]
timeout = "5m"

[review]
preset = "claude"
max_rejections = 3
on_error = "accept"

[[guard]]
name = "vet"
run = "go vet ./..."

[[guard]]
name = "test"
run = "go test ./..."
timeout = "20m"
output_limit = 4096

[prompt]
budget = "64KiB"

[loop]
max_iterations = 7
max_attempts = 2
on_blocked = "continue"
max_wait = "1h"
max_cost_usd = 12.5
max_tokens = 1000000
max_consecutive_errors = 0
rate_limit_backoff = "10s"
rate_limit_backoff_max = "5m"
keep_runs = 50

[scrub]
enabled = false
allow = ["AKIAIOSFODNN7EXAMPLE"]

[[scrub.rules]]
name = "internal"
regex = 'itk_[a-z0-9]{8}'

[git]
checkpoint = false
branch = "night/{root}"
worktree = true
setup = ["npm ci"]
setup_timeout = "5m"
base = "develop"
follow_base = false
remote = "upstream"
keep_refs = { count = 5, age = "24h" }

[verify]
protect = ["tests/**"]
preflight = false

[sandbox]
mode = "required"
writable = ["~/.cache/pip", "/var/tmp/build"]
max_processes = 300
`
	want := &Config{
		Executor: Executor{
			Name: "claude", Preset: "claude", Bin: "/opt/claude", Args: []string{"--model", "opus"},
			Timeout: Duration{45 * time.Minute}, IdleTimeout: Duration{5 * time.Minute},
			KillGrace: Duration{3 * time.Second}, OutputLimit: 2 * MB,
			Env:               map[string]string{"GOCACHE": "/tmp/gc", "IS_SANDBOX": "1"},
			EnvDrop:           []string{"OPENAI_API_KEY"},
			RateLimitPatterns: []string{"slow down"},
			Prices:            state.Prices{Input: 3, CachedInput: 3, Output: 15},
		},
		Fallbacks: []Executor{{
			Name: "backup", Preset: "command", Command: []string{"agent", "{prompt_file}"},
			Timeout: Duration{5 * time.Minute}, KillGrace: Duration{DefaultKillGrace}, OutputLimit: DefaultOutputLimit,
			RateLimitPatterns: DefaultRateLimitPatterns,
		}},
		Review: Review{
			Executor: Executor{Name: "claude", Preset: "claude", Args: DefaultReviewArgs("claude"),
				Timeout: Duration{DefaultTimeout}, KillGrace: Duration{DefaultKillGrace}, OutputLimit: DefaultOutputLimit,
				RateLimitPatterns: DefaultRateLimitPatterns},
			MaxRejections: 3, OnError: "accept", Enabled: true,
		},
		Guards: []Guard{
			{Name: "vet", Run: "go vet ./...", Timeout: Duration{10 * time.Minute}, OutputLimit: MiB},
			{Name: "test", Run: "go test ./...", Timeout: Duration{20 * time.Minute}, OutputLimit: 4096},
		},
		Prompt: Prompt{Budget: 64 * KiB},
		Loop: Loop{MaxIterations: 7, MaxAttempts: 2, OnBlocked: "continue",
			MaxWait: Duration{time.Hour}, MaxCostUSD: 12.5, MaxTokens: 1000000,
			MaxConsecutiveErrors: 0, RateLimitBackoff: Duration{10 * time.Second}, RateLimitBackoffMax: Duration{5 * time.Minute}, Parallel: 1,
			KeepRuns: 50},
		Scrub: Scrub{Enabled: false, Allow: []string{"AKIAIOSFODNN7EXAMPLE"},
			Rules: []ScrubRule{{Name: "internal", Regex: "itk_[a-z0-9]{8}"}}},
		Git:     Git{Checkpoint: false, Branch: "night/{root}", Worktree: true, Setup: []string{"npm ci"}, SetupTimeout: Duration{5 * time.Minute}, Timeout: Duration{DefaultGitTimeout}, Base: "develop", Remote: "upstream", KeepRefs: KeepRefs{Count: 5, Age: Duration{24 * time.Hour}}},
		Verify:  Verify{Protect: []string{"tests/**"}, EmptyDone: EmptyDoneNote},
		Sandbox: Sandbox{Mode: "required", Writable: []string{"~/.cache/pip", "/var/tmp/build"}, MaxProcesses: 300},
	}
	if got := mustParse(t, src); !reflect.DeepEqual(got, want) {
		t.Fatalf("Parse:\n got %+v\nwant %+v", got, want)
	}
}

// TestChainAndReviewDefaults: a [[fallback]] takes the built-in defaults
// of the keys it leaves out, not [executor]'s values; names follow the
// preset; [review] is off unless the file has the table, and its args
// keep the reviewer from editing.
func TestChainAndReviewDefaults(t *testing.T) {
	cfg := mustParse(t, "[executor]\npreset = \"claude\"\ntimeout = \"5m\"\nenv = { A = \"1\" }\n[[fallback]]\npreset = \"codex\"\n")
	f := cfg.Fallbacks[0]
	if f.Name != "codex" || f.Timeout.Duration != DefaultTimeout || f.Env != nil || !reflect.DeepEqual(f.Args, DefaultArgs("codex")) {
		t.Errorf("fallback = %+v, want the defaults of a codex executor", f)
	}
	if got := cfg.Chain(); len(got) != 2 || got[0].Label() != "claude" || got[1].Label() != "codex" {
		t.Errorf("chain = %+v", got)
	}
	if cfg.Review.Enabled {
		t.Error("review enabled without a [review] table")
	}
	for _, tc := range []struct {
		src  string
		args []string
	}{
		{"[review]\n", []string{"--sandbox", "read-only"}},
		{"[review]\npreset = \"claude\"\n", []string{"--disallowedTools", "Bash", "Edit", "Write", "MultiEdit", "NotebookEdit"}},
		{"[review]\npreset = \"codex\"\nargs = [\"-m\", \"o3\"]\n", []string{"-m", "o3"}},
	} {
		r := mustParse(t, tc.src).Review
		if !r.Enabled || r.MaxRejections != 2 || r.OnError != "wait" || !reflect.DeepEqual(r.Args, tc.args) {
			t.Errorf("Parse(%q).Review = %+v, want enabled, 2, wait, args %q", tc.src, r, tc.args)
		}
	}
}

func TestArgsDefaultFollowsPreset(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"codex default", ``, []string{"--sandbox", "workspace-write"}},
		{"claude default", `[executor]
preset = "claude"`, []string{"--permission-mode", "acceptEdits", "--allowedTools", "Bash"}},
		{"explicitly empty", `[executor]
args = []`, nil},
		{"explicit", `[executor]
args = ["--dangerously-bypass-approvals-and-sandbox"]`, []string{"--dangerously-bypass-approvals-and-sandbox"}},
		{"command has none", `[executor]
preset = "command"
command = ["agent"]`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustParse(t, tc.src).Executor.Args; !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("args = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestValidationRules checks every value rule: each case must yield a
// problem naming the key, on the expected line, with the expected text.
func TestValidationRules(t *testing.T) {
	tests := []struct {
		name string
		src  string
		line int
		key  string
		msg  string
	}{
		{"unknown preset", "[executor]\npreset = \"gemini\"\n", 2, "executor.preset", `unknown preset "gemini"`},
		{"command preset without command", "[executor]\npreset = \"command\"\n", 2, "executor.command", "must be set when preset = \"command\""},
		{"command preset with empty program", "[executor]\npreset = \"command\"\ncommand = [\"\", \"x\"]\n", 3, "executor.command[0]", "must not be empty"},
		{"command preset with args", "[executor]\npreset = \"command\"\ncommand = [\"a\"]\nargs = [\"-x\"]\n", 4, "executor.args", "not used with preset"},
		{"command preset with bin", "[executor]\npreset = \"command\"\ncommand = [\"a\"]\nbin = \"b\"\n", 4, "executor.bin", "not used with preset"},
		{"command with codex preset", "[executor]\ncommand = [\"a\"]\n", 2, "executor.command", "only used with preset"},
		{"zero timeout", "[executor]\ntimeout = \"0s\"\n", 2, "executor.timeout", "greater than zero"},
		{"negative timeout", "[executor]\ntimeout = \"-1m\"\n", 2, "executor.timeout", "greater than zero"},
		{"negative idle", "[executor]\nidle_timeout = \"-1s\"\n", 2, "executor.idle_timeout", "must not be negative"},
		{"negative grace", "[executor]\nkill_grace = \"-1s\"\n", 2, "executor.kill_grace", "must not be negative"},
		{"zero output limit", "[executor]\noutput_limit = 0\n", 2, "executor.output_limit", "greater than zero"},
		{"negative output limit", "[executor]\noutput_limit = -5\n", 2, "executor.output_limit", "must not be negative"},
		{"bad env name", "[executor]\nenv = { \"A-B\" = \"1\" }\n", 2, `executor.env.A-B`, "not a valid environment variable name"},
		{"env not strings", "[executor]\nenv = { A = 1 }\n", 2, "executor.env.A", "want a string"},
		{"bad env_drop", "[executor]\nenv_drop = [\"\"]\n", 2, "executor.env_drop[0]", "not a valid environment variable name"},
		{"args not strings", "[executor]\nargs = [\"a\", 2]\n", 2, "executor.args[1]", "want a string, got the integer 2"},
		{"args not an array", "[executor]\nargs = \"-x\"\n", 2, "executor.args", "want an array of strings"},
		{"bad duration", "[executor]\n\ntimeout = \"30 minutes\"\n", 3, "executor.timeout", `invalid duration "30 minutes": use Go syntax such as "90s"`},
		{"duration as integer", "[executor]\ntimeout = 30\n", 2, "executor.timeout", `want a duration string in Go syntax such as "90s"`},
		{"bad size", "[prompt]\nbudget = \"40 kilobytes\"\n", 2, "prompt.budget", `invalid size "40 kilobytes": use an integer with a unit such as "100B", "40KiB"`},
		{"size as float", "[prompt]\nbudget = 1.5\n", 2, "prompt.budget", `want a size such as "40KiB"`},
		{"zero budget", "[prompt]\nbudget = \"0B\"\n", 2, "prompt.budget", "greater than zero"},
		{"max_iterations 0", "[loop]\nmax_iterations = 0\n", 2, "loop.max_iterations", "at least 1"},
		{"max_attempts 0", "[loop]\nmax_attempts = 0\n", 2, "loop.max_attempts", "at least 1"},
		{"max_attempts string", "[loop]\nmax_attempts = \"3\"\n", 2, "loop.max_attempts", `want an integer, got the string "3"`},
		{"on_blocked", "[loop]\non_blocked = \"pause\"\n", 2, "loop.on_blocked", `want "stop" or "continue", got "pause"`},
		{"negative max_wait", "[loop]\nmax_wait = \"-1h\"\n", 2, "loop.max_wait", "must not be negative"},
		{"negative cost", "[loop]\nmax_cost_usd = -1\n", 2, "loop.max_cost_usd", "0 or more"},
		{"infinite cost", "[loop]\nmax_cost_usd = inf\n", 2, "loop.max_cost_usd", "0 or more"},
		{"negative tokens", "[loop]\nmax_tokens = -1\n", 2, "loop.max_tokens", "0 or more"},
		{"codex cost limit without prices", "[loop]\nmax_cost_usd = 5\n", 2, "executor.price", "must be set when loop.max_cost_usd is"},
		{"codex task cost limit without prices", "[loop]\ntask_max_cost_usd = 5\n", 2, "executor.price", "must be set when loop.task_max_cost_usd is"},
		{"negative task cost", "[loop]\ntask_max_cost_usd = -1\n", 2, "loop.task_max_cost_usd", "0 or more"},
		{"negative task tokens", "[loop]\ntask_max_tokens = -1\n", 2, "loop.task_max_tokens", "0 or more"},
		{"escalate unknown executor", "[[fallback]]\nname = \"large\"\npreset = \"claude\"\n[loop]\nescalate = [\"codex\", \"huge\"]\n", 5, "loop.escalate[1]", `"huge" is not an executor of the chain; name [executor] or a [[fallback]] ("codex" [executor], "large" fallback[0])`},
		{"escalate to the reviewer", "[review]\nname = \"rev\"\n[loop]\nescalate = [\"rev\"]\n", 4, "loop.escalate[0]", `"rev" is not an executor of the chain`},
		{"negative new price", "[executor]\nprice = { input_per_mtok = -1 }\n", 2, "executor.price.input_per_mtok", "0 or more"},
		{"unknown new price", "[executor]\nprice = { input = 1 }\n", 2, "", `unknown key "executor.price.input"`},
		{"price and prices", "[executor]\nprice = { input_per_mtok = 1 }\nprices = { input = 1 }\n", 3, "executor.price", "keep price (prices is its older spelling)"},
		{"negative price", "[executor]\nprices = { input = -1, output = 2 }\n", 2, "executor.prices.input", "0 or more"},
		{"unknown price", "[executor]\nprices = { inputs = 1 }\n", 2, "", `unknown key "executor.prices.inputs" (did you mean "executor.prices.input"?)`},
		{"price not a number", "[executor]\nprices = { output = \"2\" }\n", 2, "executor.prices.output", "want a number"},
		{"bad rate limit pattern", "[executor]\nrate_limit_patterns = [\"ok\", \"(x\"]\n", 2, "executor.rate_limit_patterns[1]", "does not compile"},
		{"empty rate limit pattern", "[executor]\nrate_limit_patterns = [\"a*\"]\n", 2, "executor.rate_limit_patterns[0]", "matches the empty string"},
		{"negative consecutive errors", "[loop]\nmax_consecutive_errors = -1\n", 2, "loop.max_consecutive_errors", "0 or more"},
		{"negative keep_runs", "[loop]\nkeep_runs = -1\n", 2, "loop.keep_runs", "0 or more"},
		{"zero backoff", "[loop]\nrate_limit_backoff = \"0s\"\n", 2, "loop.rate_limit_backoff", "greater than zero"},
		{"backoff max below base", "[loop]\nrate_limit_backoff = \"5m\"\nrate_limit_backoff_max = \"1m\"\n", 3, "loop.rate_limit_backoff_max", "must not be shorter"},
		{"guard without name", "[[guard]]\nrun = \"true\"\n", 1, "guard[0].name", "needs a name"},
		{"guard without run", "[[guard]]\nname = \"t\"\nrun = \"  \"\n", 3, "guard[0].run", "needs a command"},
		{"guard without run key", "\n[[guard]]\nname = \"t\"\n", 2, "guard[0].run", "needs a command"},
		{"duplicate guard", "[[guard]]\nname = \"t\"\nrun = \"a\"\n[[guard]]\nname = \"t\"\nrun = \"b\"\n", 5, "guard[1].name", `"t" is already used by guard[0]`},
		{"guard zero timeout", "[[guard]]\nname = \"t\"\nrun = \"a\"\ntimeout = \"0s\"\n", 4, "guard[0].timeout", "greater than zero"},
		{"guard zero output", "[[guard]]\nname = \"t\"\nrun = \"a\"\noutput_limit = \"0B\"\n", 4, "guard[0].output_limit", "greater than zero"},
		{"guard not a table", "guard = \"go test\"\n", 1, "guard", "want [[guard]] sections"},
		{"guard inline array", "guard = [{ name = \"t\", run = \"a\" }, 3]\n", 1, "guard[1]", "want a table"},
		{"scrub rule without name", "[[scrub.rules]]\nregex = \"x+\"\n", 1, "scrub.rules[0].name", "needs a name"},
		{"scrub rule bad name", "[[scrub.rules]]\nname = \"a b\"\nregex = \"x+\"\n", 2, "scrub.rules[0].name", "use letters"},
		{"scrub rule duplicate", "[[scrub.rules]]\nname = \"a\"\nregex = \"x+\"\n[[scrub.rules]]\nname = \"a\"\nregex = \"y+\"\n", 5, "scrub.rules[1].name", "already used"},
		{"scrub rule without regex", "[[scrub.rules]]\nname = \"a\"\n", 1, "scrub.rules[0].regex", "needs a regex"},
		{"scrub rule bad regex", "[[scrub.rules]]\nname = \"a\"\nregex = \"(ab\"\n", 3, "scrub.rules[0].regex", "does not compile: error parsing regexp: missing closing )"},
		{"scrub rule empty match", "[[scrub.rules]]\nname = \"a\"\nregex = \"x*\"\n", 3, "scrub.rules[0].regex", "matches the empty string"},
		{"scrub enabled not bool", "[scrub]\nenabled = \"yes\"\n", 2, "scrub.enabled", "want true or false"},
		{"scrub allow empty entry", "[scrub]\nallow = [\"ok\", \"\"]\n", 2, "scrub.allow[1]", "must not be empty"},
		{"table is a value", "executor = \"codex\"\n", 1, "executor", "want a table ([executor])"},
		{"bad executor name", "[executor]\nname = \"my agent\"\n", 2, "executor.name", "use letters"},
		{"fallback without command", "[[fallback]]\npreset = \"command\"\n", 2, "fallback[0].command", "must be set when preset"},
		{"fallback unknown preset", "[[fallback]]\nname = \"g\"\npreset = \"gemini\"\n", 3, "fallback[0].preset", `unknown preset "gemini"`},
		{"fallback zero timeout", "[[fallback]]\nname = \"c\"\npreset = \"claude\"\ntimeout = \"0s\"\n", 4, "fallback[0].timeout", "greater than zero"},
		{"fallback named as executor", "[[fallback]]\npreset = \"codex\"\n", 1, "fallback[0].name", `"codex" is already the name of [executor]`},
		{"two fallbacks one name", "[[fallback]]\nname = \"x\"\n[[fallback]]\nname = \"x\"\n", 3, "fallback[1].name", `"x" is already the name of fallback[0]`},
		{"fallback codex cost without prices", "[executor]\npreset = \"claude\"\n[[fallback]]\n\n[loop]\nmax_cost_usd = 5\n", 6, "fallback[0].price", "must be set when loop.max_cost_usd is"},
		{"review command without command", "[review]\npreset = \"command\"\n", 2, "review.command", "must be set when preset"},
		{"review max_rejections 0", "[review]\nmax_rejections = 0\n", 2, "review.max_rejections", "at least 1"},
		{"review on_error", "[review]\non_error = \"ignore\"\n", 2, "review.on_error", `want "wait"`},
		{"notify without url", "[[notify]]\nevents = [\"blocked\"]\n", 1, "notify[0].url", "every [[notify]] needs a url"},
		{"notify url not http", "[[notify]]\nurl = \"hooks.slack.com/services/T/B/x\"\n", 2, "notify[0].url", "want an http:// or https:// URL"},
		{"notify unknown event", "[[notify]]\nurl = \"https://ntfy.sh/a\"\nevents = [\"stuck\", \"blokced\"]\n", 3, "notify[0].events[1]", `unknown event "blokced" (did you mean "blocked"?); the events are blocked, stuck, complete, limit, error, tamper`},
		{"notify unknown format", "[[notify]]\nurl = \"https://example.com/h\"\nformat = \"teams\"\n", 3, "notify[0].format", `unknown format "teams"; want json, slack, discord, ntfy`},
		{"notify ntfy without topic", "[[notify]]\nurl = \"https://ntfy.sh/\"\n", 2, "notify[0].url", "an ntfy URL ends with its topic"},
		{"notify events not strings", "[[notify]]\nurl = \"https://ntfy.sh/a\"\nevents = \"blocked\"\n", 3, "notify[0].events", "want an array of strings"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantProblem(t, tc.src, tc.line, tc.key, tc.msg)
		})
	}
}

func TestUnknownKeys(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"misspelled", "[loop]\nmax_attempts = 3\n\n\n\n\nmax_iteration = 5\n",
			`.runner/config.toml: line 7: unknown key "loop.max_iteration" (did you mean "loop.max_iterations"?)`},
		{"wrong case", "[executor]\nPreset = \"codex\"\n",
			`.runner/config.toml: line 2: unknown key "executor.Preset" (did you mean "executor.preset"?)`},
		{"wrong table", "[prompt]\nmax_attempts = 3\n",
			`.runner/config.toml: line 2: unknown key "prompt.max_attempts" (did you mean "loop.max_attempts"?)`},
		{"top-level key", "preset = \"claude\"\n",
			`.runner/config.toml: line 1: unknown key "preset" (did you mean "executor.preset"?)`},
		{"unknown table", "\n[lop]\nmax_attempts = 3\n",
			`.runner/config.toml: line 2: unknown key "lop" (did you mean "loop"?)`},
		{"in a guard", "[[guard]]\nname = \"a\"\nrun = \"b\"\n[[guard]]\nname = \"c\"\nrun = \"d\"\ntimout = \"1m\"\n",
			`.runner/config.toml: line 7: unknown key "guard[1].timout" (did you mean "guard[1].timeout"?)`},
		{"in a scrub rule", "[[scrub.rules]]\nname = \"a\"\nregex = \"b\"\nregexp = \"c\"\n",
			`.runner/config.toml: line 4: unknown key "scrub.rules[0].regexp" (did you mean "scrub.rules[0].regex"?)`},
		{"dotted key", "executor.presett = \"codex\"\n",
			`.runner/config.toml: line 1: unknown key "executor.presett" (did you mean "executor.preset"?)`},
		{"in an inline table", "loop = { max_attempts = 2,\n  bogus_thing = 1 }\n",
			`.runner/config.toml: line 2: unknown key "loop.bogus_thing"; known keys here: max_iterations, max_attempts`},
		{"no suggestion", "[loop]\nwhatever = 1\n",
			`.runner/config.toml: line 2: unknown key "loop.whatever"; known keys here: max_iterations, max_attempts, on_blocked`},
		{"after a byte order mark", "\ufeff[loop]\nbogus = 1\n",
			`.runner/config.toml: line 2: unknown key "loop.bogus"`},
		{"crlf line ends", "[loop]\r\nmax_attempts = 2\r\nbogus = 1\r\n",
			`.runner/config.toml: line 3: unknown key "loop.bogus"`},
		{"quoted key", "[executor]\n\"pre set\" = 1\n",
			`.runner/config.toml: line 2: unknown key "executor.\"pre set\"" (did you mean "executor.preset"?)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			probs := parseProblems(t, tc.src)
			if len(probs) != 1 {
				t.Fatalf("got %d problems, want 1:\n%v", len(probs), &Error{probs})
			}
			if got := probs[0].Error(); !strings.HasPrefix(got, tc.want) {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestSeveralProblemsAtOnce(t *testing.T) {
	src := `[executor]
preset = "claud"
timeout = 30
output_limit = "8 parsecs"

[loop]
max_iteration = 5
max_attempts = 0

[[guard]]
name = "test"
`
	probs := parseProblems(t, src)
	want := []string{
		`.runner/config.toml: line 2: executor.preset: unknown preset "claud"`,
		`.runner/config.toml: line 3: executor.timeout: want a duration string`,
		`.runner/config.toml: line 4: executor.output_limit: invalid size "8 parsecs"`,
		`.runner/config.toml: line 7: unknown key "loop.max_iteration" (did you mean "loop.max_iterations"?)`,
		`.runner/config.toml: line 8: loop.max_attempts: must be at least 1, got 0`,
		`.runner/config.toml: line 10: guard[0].run: every [[guard]] needs a command`,
	}
	if len(probs) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(probs), len(want), &Error{probs})
	}
	for i, w := range want {
		if !strings.HasPrefix(probs[i].Error(), w) {
			t.Errorf("problem %d:\n got %s\nwant %s...", i, probs[i].Error(), w)
		}
	}
	// The error text lists them one per line, in file order.
	_, err := Parse(file, []byte(src))
	if lines := strings.Split(err.Error(), "\n"); len(lines) != len(want) {
		t.Errorf("error text has %d lines, want %d:\n%v", len(lines), len(want), err)
	}
}

func TestSyntaxError(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		line, col int
		msg       string
	}{
		{"missing value", "[executor]\npreset = \n", 2, 10, "invalid TOML"},
		{"duplicate key", "[loop]\nmax_attempts = 1\nmax_attempts = 2\n", 3, 0, "invalid TOML"},
		{"unclosed table", "[loop\n", 1, 6, "invalid TOML"},
		{"newline in string", "a = 1\nb = \"x\ny\"\n", 2, 7, "strings cannot contain newlines"},
		{"columns count runes", "a = \"é\" x\n", 1, 8, "invalid TOML"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			probs := parseProblems(t, tc.src)
			if len(probs) != 1 {
				t.Fatalf("got %d problems, want 1: %v", len(probs), &Error{probs})
			}
			p := probs[0]
			if p.Line != tc.line || (tc.col != 0 && p.Column != tc.col) || p.Column == 0 {
				t.Fatalf("problem %q at line %d column %d, want line %d column %d", p.Error(), p.Line, p.Column, tc.line, tc.col)
			}
			prefix := file + ": line "
			if !strings.HasPrefix(p.Error(), prefix) || !strings.Contains(p.Error(), ", column ") || !strings.Contains(p.Msg, tc.msg) {
				t.Fatalf("problem text %q lacks file, line, column or %q", p.Error(), tc.msg)
			}
		})
	}
}

// TestExampleConfig checks the config.toml shipped in .runner.example/:
// it parses, and every value it writes equals the default it claims to
// be, plus the one example guard.
func TestExampleConfig(t *testing.T) {
	data, err := runner.Example.ReadFile(runner.ExampleDir + "/config.toml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := mustParse(t, string(data))
	want := Default()
	want.Guards = []Guard{{Name: "test", Run: "go test ./...", Timeout: Duration{DefaultGuardTimeout}, OutputLimit: DefaultGuardOutputLimit}}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("example config:\n got %+v\nwant %+v", cfg, want)
	}
	// Every key is present or commented out.
	text := string(data)
	for table, keys := range tableKeys {
		if table == "" {
			continue
		}
		for _, k := range keys {
			if table == "scrub" && k == "rules" {
				k = "[[scrub.rules]]"
				if !strings.Contains(text, "\n# "+k+"\n") {
					t.Errorf("example config.toml does not show %s", k)
				}
				continue
			}
			if table == "guard" {
				table = "[[guard]]"
			}
			if !strings.Contains(text, "\n"+k+" = ") && !strings.Contains(text, "\n# "+k+" = ") {
				t.Errorf("example config.toml does not show %s.%s", table, k)
			}
		}
	}
	for _, k := range scrubRuleKey {
		if !strings.Contains(text, "\n# "+k+" = ") {
			t.Errorf("example config.toml does not show scrub.rules %s", k)
		}
	}
}

func TestNotifyTargets(t *testing.T) {
	cfg := mustParse(t, `
[[notify]]
url = "https://hooks.slack.com/services/T000/B000/XXXX"

[[notify]]
url = "https://ntfy.example.com/runner"
events = ["blocked", "stuck", "error"]
format = "ntfy"
`)
	want := []notify.Target{
		{URL: "https://hooks.slack.com/services/T000/B000/XXXX"},
		{URL: "https://ntfy.example.com/runner", Events: []string{"blocked", "stuck", "error"}, Format: "ntfy"},
	}
	if !reflect.DeepEqual(cfg.Notify, want) {
		t.Fatalf("notify = %+v, want %+v", cfg.Notify, want)
	}
	// A webhook URL is a secret: no problem quotes it.
	for _, p := range parseProblems(t, "[[notify]]\nurl = \"https://hooks.slack.com/services/T/B/s3cr3t\"\nevents = [\"nope\"]\nformat = \"x\"\n") {
		if strings.Contains(p.Error(), "s3cr3t") {
			t.Errorf("problem %q quotes the webhook URL", p.Error())
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	t.Run("ok", func(t *testing.T) {
		cfg, err := Load(write("ok.toml", "[loop]\nmax_attempts = 5\n"))
		if err != nil || cfg.Loop.MaxAttempts != 5 {
			t.Fatalf("Load = %+v, %v", cfg, err)
		}
	})
	t.Run("missing", func(t *testing.T) {
		p := filepath.Join(dir, "absent.toml")
		_, err := Load(p)
		if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "runner init") || !strings.Contains(err.Error(), p) {
			t.Fatalf("Load of a missing file = %v; want ErrNotExist naming the file and `runner init`", err)
		}
	})
	t.Run("problems name the path", func(t *testing.T) {
		p := write("bad.toml", "[loop]\nmax_attempts = 0\n")
		_, err := Load(p)
		if err == nil || !strings.HasPrefix(err.Error(), p+": line 2: loop.max_attempts") {
			t.Fatalf("Load = %v; want a problem naming %s and line 2", err, p)
		}
	})
	t.Run("invalid utf-8", func(t *testing.T) {
		_, err := Load(write("latin1.toml", "# caf\xe9\n"))
		if err == nil || !strings.Contains(err.Error(), "UTF-8") {
			t.Fatalf("Load = %v; want a UTF-8 error", err)
		}
	})
	t.Run("too large", func(t *testing.T) {
		_, err := Load(write("big.toml", "#"+strings.Repeat("x", MaxFileSize)+"\n"))
		if err == nil || !strings.Contains(err.Error(), "too large") {
			t.Fatalf("Load = %v; want a size error", err)
		}
	})
}

func TestValidateBuiltConfig(t *testing.T) {
	c := Default()
	c.Loop.MaxAttempts = 0
	c.Guards = []Guard{{Name: "x"}}
	err := c.Validate()
	var ce *Error
	if !errors.As(err, &ce) || len(ce.Problems) != 4 {
		t.Fatalf("Validate = %v; want 4 problems (max_attempts, guard run, timeout, output_limit)", err)
	}
}

func TestKeyLines(t *testing.T) {
	src := `# comment with key = "value"
title = """
not_a_key = 1
"""
lit = '''
also = "no"'''
a.b . "c.d" = 1   # dotted
'quoted key' = 'x'
arr = [
  1, # one
  [2, 3],
  { x = 1, y = { z = "}" } },
]
when = 1979-05-27 07:32:00Z

[tab]
inline = { k = "v",
  k2 = [1,
    2] }

[[aot]]
name = "first"
[aot.sub]
x = 1
[[aot]]
name = "second"
[[aot.list]]
y = "\"]"
`
	want := map[string]int{
		"title":            2,
		"lit":              5,
		"a":                7,
		"a.b":              7,
		`a.b."c.d"`:        7,
		`"quoted key"`:     8,
		"arr":              9,
		"arr[0]":           10,
		"arr[1]":           11,
		"arr[1][1]":        11,
		"arr[2]":           12,
		"arr[2].y.z":       12,
		"when":             14,
		"tab":              16,
		"tab.inline":       17,
		"tab.inline.k2":    18,
		"tab.inline.k2[1]": 19,
		"aot":              21,
		"aot[0]":           21,
		"aot[0].name":      22,
		"aot[0].sub":       23,
		"aot[0].sub.x":     24,
		"aot[1]":           25,
		"aot[1].name":      26,
		"aot[1].list[0]":   27,
		"aot[1].list[0].y": 28,
	}
	got := keyLines(src)
	for k, line := range want {
		if got[k] != line {
			t.Errorf("line of %s = %d, want %d", k, got[k], line)
		}
	}
	for _, k := range []string{"not_a_key", "also"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s inside a multi-line string was taken for a key", k)
		}
	}
}

func TestParentPath(t *testing.T) {
	tests := map[string]string{
		"a":            "",
		"a.b":          "a",
		"guard[1]":     "guard",
		"guard[1].run": "guard[1]",
		`e."x.y"`:      "e",
		`e."x.y".z`:    `e."x.y"`,
	}
	for in, want := range tests {
		if got := parentPath(in); got != want {
			t.Errorf("parentPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestExampleCommentedValues checks that the commented-out lines of the
// example config.toml that show a key's built-in value or a sample load,
// and that rate_limit_patterns shows exactly the built-in list.
func TestExampleCommentedValues(t *testing.T) {
	data, err := runner.Example.ReadFile(runner.ExampleDir + "/config.toml")
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		for _, key := range []string{"rate_limit_patterns", "price", "prices"} {
			if strings.HasPrefix(line, "# "+key+" = ") {
				lines[key] = strings.TrimPrefix(line, "# ")
			}
		}
	}
	cfg := mustParse(t, "[executor]\n"+lines["rate_limit_patterns"]+"\n"+lines["price"]+"\n[loop]\nmax_cost_usd = 5\n")
	if !reflect.DeepEqual(cfg.Executor.RateLimitPatterns, DefaultRateLimitPatterns) {
		t.Errorf("commented rate_limit_patterns = %q, want the built-in %q", cfg.Executor.RateLimitPatterns, DefaultRateLimitPatterns)
	}
	want := state.Prices{Input: 1.25, CachedInput: 0.125, Output: 10}
	if got := cfg.Executor.Pricing(); got != want {
		t.Errorf("commented price = %+v, want %+v", got, want)
	}
	old := mustParse(t, "[executor]\n"+lines["prices"]+"\n[loop]\nmax_cost_usd = 5\n")
	if got := old.Executor.Pricing(); got != want {
		t.Errorf("commented prices (the older spelling) = %+v, want %+v", got, want)
	}
}
