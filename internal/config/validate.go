package config

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/runner-cli/runner/internal/lazyregexp"
	"github.com/runner-cli/runner/internal/notify"
	"github.com/runner-cli/runner/internal/testreport"
	"github.com/runner-cli/runner/internal/verify"
)

// Validate checks the value rules of a Config built in code; Parse applies
// the same rules to every file it reads.
func (c *Config) Validate() error {
	r := &report{file: "config"}
	r.validate(c)
	return r.err()
}

// scrubRuleName restricts rule names so [REDACTED:<name>] stays readable.
var scrubRuleName = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func (r *report) validate(c *Config) {
	r.validateExecutor("executor", &c.Executor)
	r.validateChain(c)

	seen := map[string]int{}
	for i, g := range c.Guards {
		p := indexPath("guard", i)
		if strings.TrimSpace(g.Name) == "" {
			r.addf(keyPath(p, "name"), "every [[guard]] needs a name")
		} else if j, dup := seen[g.Name]; dup {
			r.addf(keyPath(p, "name"), "guard name %q is already used by guard[%d]", g.Name, j)
		} else {
			seen[g.Name] = i
		}
		if strings.TrimSpace(g.Run) == "" {
			r.addf(keyPath(p, "run"), `every [[guard]] needs a command to run, for example run = "go test ./..."`)
		}
		r.positive(keyPath(p, "timeout"), g.Timeout, `"10m"`)
		r.positiveSize(keyPath(p, "output_limit"), g.OutputLimit, `"1MiB"`)
		if _, err := testreport.ParseFormat(g.Report); err != nil {
			r.addf(keyPath(p, "report"), "%v", err)
		}
	}

	r.positiveSize("prompt.budget", c.Prompt.Budget, `"40KiB"`)
	r.validateEngine(c.Engine)

	switch c.Sandbox.Mode {
	case SandboxAuto, SandboxRequired, SandboxOff:
	default:
		r.addf("sandbox.mode", `want "auto" (confine where the kernel can), "required" (refuse to run unconfined) or "off", got %q`, c.Sandbox.Mode)
	}
	if c.Sandbox.MaxProcesses < 0 {
		r.addf("sandbox.max_processes", "%d: want 0 (no limit) or more", c.Sandbox.MaxProcesses)
	}
	for i, w := range c.Sandbox.Writable {
		if !strings.HasPrefix(w, "/") && !strings.HasPrefix(w, "~/") {
			r.addf(indexPath("sandbox.writable", i), "%q: want an absolute directory or one starting with \"~/\"", w)
		}
	}

	l := &c.Loop
	if l.MaxIterations < 1 {
		r.addf("loop.max_iterations", "must be at least 1, got %d", l.MaxIterations)
	}
	if l.MaxAttempts < 1 {
		r.addf("loop.max_attempts", "must be at least 1, got %d", l.MaxAttempts)
	}
	if l.OnBlocked != OnBlockedStop && l.OnBlocked != OnBlockedContinue {
		r.addf("loop.on_blocked", `want "stop" or "continue", got %q`, l.OnBlocked)
	}
	r.nonNegative("loop.max_wait", l.MaxWait, `"6h"`)
	r.validateSpend(c)
	if l.MaxConsecutiveErrors < 0 {
		r.addf("loop.max_consecutive_errors", "must be 0 or more (0 = off), got %d", l.MaxConsecutiveErrors)
	}
	if l.Parallel < 1 || l.Parallel > MaxParallel {
		r.addf("loop.parallel", "must be from 1 (one task at a time) to %d, got %d", MaxParallel, l.Parallel)
	}
	if l.KeepRuns < 0 {
		r.addf("loop.keep_runs", "must be 0 or more (0 = keep every run folder), got %d", l.KeepRuns)
	}
	r.positive("loop.rate_limit_backoff", l.RateLimitBackoff, `"1m"`)
	r.positive("loop.rate_limit_backoff_max", l.RateLimitBackoffMax, `"30m"`)
	if l.RateLimitBackoffMax.Duration > 0 && l.RateLimitBackoffMax.Duration < l.RateLimitBackoff.Duration {
		r.addf("loop.rate_limit_backoff_max", "must not be shorter than loop.rate_limit_backoff (%s), got %s", l.RateLimitBackoff.Duration, l.RateLimitBackoffMax.Duration)
	}

	names := map[string]int{}
	for i, rule := range c.Scrub.Rules {
		p := indexPath("scrub.rules", i)
		switch j, dup := names[rule.Name]; {
		case rule.Name == "":
			r.addf(keyPath(p, "name"), "every scrub rule needs a name")
		case !scrubRuleName.MatchString(rule.Name):
			r.addf(keyPath(p, "name"), "%q: use letters, digits, '.', '_' and '-' (at most 64), starting with a letter or digit", rule.Name)
		case dup:
			r.addf(keyPath(p, "name"), "scrub rule name %q is already used by scrub.rules[%d]", rule.Name, j)
		default:
			names[rule.Name] = i
		}
		if rule.Regex == "" {
			r.addf(keyPath(p, "regex"), "every scrub rule needs a regex")
			continue
		}
		re, err := regexp.Compile(rule.Regex)
		if err != nil {
			r.addf(keyPath(p, "regex"), "does not compile: %v", err)
			continue
		}
		if re.MatchString("") {
			r.addf(keyPath(p, "regex"), "%q matches the empty string, so it would redact everywhere", rule.Regex)
		}
	}
	for i, a := range c.Scrub.Allow {
		if a == "" {
			r.addf(indexPath("scrub.allow", i), "allow-list entries must not be empty")
		}
	}
	r.validateGit(c.Git)
	for i, pat := range c.Verify.Protect {
		if _, err := verify.ParseGlob(pat); err != nil {
			r.addf(indexPath("verify.protect", i), "%v; for example \"tests/**\"", err)
		}
	}
	if c.Verify.EmptyDone != EmptyDoneNote && c.Verify.EmptyDone != EmptyDoneFail {
		r.addf("verify.empty_done", `want "note" or "fail", got %q`, c.Verify.EmptyDone)
	}
	r.validateNotify(c.Notify)
}

// validateNotify checks each [[notify]]: a URL the runner can POST to,
// known events and format. No message quotes the URL, which is a secret.
func (r *report) validateNotify(targets []notify.Target) {
	for i, t := range targets {
		p := indexPath("notify", i)
		for _, pr := range t.Problems() {
			// The keys are bare: "url", "format", "events[1]".
			path, line := p+"."+pr.Key, p+"."+pr.Key
			if pr.Key == "url" && t.URL == "" {
				line = p // no url line to point at
			}
			r.addAt(line, path, "%s", pr.Msg)
		}
	}
}

// validateExecutor checks one executor table: [executor], a
// [[fallback]] or [review]; key names it in problems.
func (r *report) validateExecutor(key string, e *Executor) {
	if e.Name != "" && !executorName.MatchString(e.Name) {
		r.addf(key+".name", "%q: use letters, digits, '.', '_' and '-' (at most 64), starting with a letter or digit", e.Name)
	}
	switch e.Preset {
	case PresetCodex, PresetClaude:
		if len(e.Command) > 0 {
			r.addf(key+".command", "is only used with preset = %q, but preset is %q; remove command or set preset = %q", PresetCommand, e.Preset, PresetCommand)
		}
	case PresetCommand:
		if len(e.Command) == 0 {
			r.addAt(key+".preset", key+".command", `must be set when preset = "command", for example ["my-agent", "--prompt", "{prompt_file}", "--out", "{output_file}"]`)
		} else if strings.TrimSpace(e.Command[0]) == "" {
			r.addf(key+".command[0]", "the program to run must not be empty")
		}
		if e.Bin != "" {
			r.addf(key+".bin", `is not used with preset = "command"; put the program first in command`)
		}
		if len(e.Args) > 0 {
			r.addf(key+".args", `is not used with preset = "command"; put every argument in command`)
		}
	default:
		r.addf(key+".preset", `unknown preset %q: want "codex", "claude" or "command"`, e.Preset)
	}
	for i, a := range e.Command {
		if strings.ContainsRune(a, 0) {
			r.addf(indexPath(key+".command", i), "must not contain a NUL byte")
		}
	}
	for i, a := range e.Args {
		if strings.ContainsRune(a, 0) {
			r.addf(indexPath(key+".args", i), "must not contain a NUL byte")
		}
	}
	r.positive(key+".timeout", e.Timeout, `"30m"`)
	r.nonNegative(key+".idle_timeout", e.IdleTimeout, `"0s" (off) or "10m"`)
	r.nonNegative(key+".kill_grace", e.KillGrace, `"10s"`)
	r.positiveSize(key+".output_limit", e.OutputLimit, `"8MiB"`)
	for _, k := range sortedKeys(e.Env) {
		if !validEnvName(k) {
			r.addf(keyPath(key+".env", k), "%q is not a valid environment variable name", k)
		} else if strings.ContainsRune(e.Env[k], 0) {
			r.addf(keyPath(key+".env", k), "value must not contain a NUL byte")
		}
	}
	for i, k := range e.EnvDrop {
		if !validEnvName(k) {
			r.addf(indexPath(key+".env_drop", i), "%q is not a valid environment variable name", k)
		}
	}
	for i, pat := range e.RateLimitPatterns {
		re, err := regexp.Compile(pat)
		switch {
		case err != nil:
			r.addf(indexPath(key+".rate_limit_patterns", i), "does not compile: %v", err)
		case re.MatchString(""):
			r.addf(indexPath(key+".rate_limit_patterns", i), "%q matches the empty string, so every failed run would count as rate limited", pat)
		}
	}
	r.validatePrice(key, e)
}

// executorName restricts executor names, which logs and status print.
var executorName = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// executorTable is an executor table with the key problems name it by.
type executorTable struct {
	key string
	e   *Executor
}

// executorTables lists the executor tables of c: [executor], each
// [[fallback]], and [review] when the file has one.
func (r *report) executorTables(c *Config) []executorTable {
	out := []executorTable{{"executor", &c.Executor}}
	for i := range c.Fallbacks {
		out = append(out, executorTable{indexPath("fallback", i), &c.Fallbacks[i]})
	}
	if c.Review.Enabled {
		out = append(out, executorTable{"review", &c.Review.Executor})
	}
	return out
}

// validateChain checks the [[fallback]] executors, whose names must
// differ from each other and from [executor]'s (each names its own
// usage, limits and failures), and [review].
func (r *report) validateChain(c *Config) {
	names := map[string]string{c.Executor.Label(): "[executor]"}
	for i := range c.Fallbacks {
		key := indexPath("fallback", i)
		f := &c.Fallbacks[i]
		r.validateExecutor(key, f)
		if other, dup := names[f.Label()]; dup {
			r.addAt(key, key+".name", "%q is already the name of %s; give each executor its own name, for example name = %q", f.Label(), other, fmt.Sprintf("%s-%d", f.Preset, i+2))
		} else {
			names[f.Label()] = key
		}
	}
	if !c.Review.Enabled {
		return
	}
	r.validateExecutor("review", &c.Review.Executor)
	if c.Review.MaxRejections < 1 {
		r.addf("review.max_rejections", "must be at least 1, got %d", c.Review.MaxRejections)
	}
	if c.Review.OnError != OnErrorWait && c.Review.OnError != OnErrorAccept {
		r.addf("review.on_error", `want "wait" (ask the reviewer again) or "accept" (done, review skipped), got %q`, c.Review.OnError)
	}
}

// validateGit checks [git]: the run branch must make a valid branch name
// once {root} (a node id, itself a valid name part) is put in.
func (r *report) validateEngine(e Engine) {
	if !e.On() {
		return
	}
	if e.Kind != EngineTemporal {
		r.addf("engine.kind", `want "temporal" (or no [engine] table, to run every iteration on this machine), got %q`, e.Kind)
		return
	}
	if strings.TrimSpace(e.Address) == "" {
		r.addf("engine.address", `the Temporal service's frontend, for example "127.0.0.1:7233"`)
	}
	switch {
	case strings.TrimSpace(e.Remote) == "":
		r.addf("engine.remote", "the git remote the coordinator and the workers share, a URL or the path of a bare repository on a shared disk")
	case transportOf(e.Remote) != "":
		r.addf("engine.remote", "%q uses git's %s transport, which runs a program of the URL's choosing: the runner never uses it; give a URL (ssh://, https://, file://) or the absolute path of a bare repository",
			e.Remote, transportOf(e.Remote))
	case relativeRemote(e.Remote):
		r.addf("engine.remote", "%q is a relative path, which each machine would look for in a folder of its own: give the absolute path "+
			"of a bare repository on a disk every worker mounts at that place, or a URL", e.Remote)
	}
	if e.Parallel < 1 || e.Parallel > MaxParallel {
		r.addf("engine.parallel", "want 1 to %d iterations in flight, got %d", MaxParallel, e.Parallel)
	}
	r.positive("engine.heartbeat", e.Heartbeat, `"30s"`)
	if k := e.KeyFile; k != "" && !strings.HasPrefix(k, "/") && !strings.HasPrefix(k, "~/") {
		r.addf("engine.key_file", "%q: want an absolute path, or one starting with \"~/\", outside the repository", k)
	}
}

// transportOf names the program-running transport a git remote asks for
// ("ext::", "fd::"), "" when it asks for none.
func transportOf(remote string) string {
	for _, t := range []string{"ext::", "fd::"} {
		if strings.HasPrefix(strings.ToLower(remote), t) {
			return t
		}
	}
	return ""
}

// relativeRemote reports whether a git remote is a path relative to the
// folder git runs in: neither a URL ("scheme://…", or "host:path" as scp
// writes it) nor an absolute path.
func relativeRemote(remote string) bool {
	if strings.Contains(remote, "://") || filepath.IsAbs(remote) {
		return false
	}
	colon, slash := strings.Index(remote, ":"), strings.Index(remote, "/")
	return colon <= 0 || (slash >= 0 && slash < colon)
}

func (r *report) validateGit(g Git) {
	name := strings.ReplaceAll(g.Branch, "{root}", "root")
	switch {
	case strings.TrimSpace(g.Branch) == "":
		r.addf("git.branch", `must not be empty; the default is %q`, DefaultRunBranch)
	case !validBranchName(name):
		r.addf("git.branch", "%q is not a valid git branch name (no spaces, no \"..\", no ~^:?*[\\, no leading or trailing / or .lock); for example %q", g.Branch, DefaultRunBranch)
	}
	for i, c := range g.Setup {
		if strings.TrimSpace(c) == "" {
			r.addf(indexPath("git.setup", i), "a setup command must not be empty")
		}
	}
	r.positive("git.setup_timeout", g.SetupTimeout, `"30m"`)
	r.positive("git.timeout", g.Timeout, `"30s"`)
	r.validateWayBack(g)
}

// validBranchName follows git check-ref-format for a branch name.
func validBranchName(s string) bool {
	if s == "" || s == "@" || strings.HasPrefix(s, "/") || strings.HasSuffix(s, "/") || strings.HasSuffix(s, ".") ||
		strings.HasPrefix(s, "-") || strings.Contains(s, "..") || strings.Contains(s, "//") || strings.Contains(s, "@{") {
		return false
	}
	for _, part := range strings.Split(s, "/") {
		if strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return false
		}
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(" ~^:?*[\\", c) {
			return false
		}
	}
	return true
}

func (r *report) positive(path string, v Duration, example string) {
	if v.Duration <= 0 {
		r.addf(path, "must be a duration greater than zero, such as %s; got %q", example, v.Duration.String())
	}
}

func (r *report) nonNegative(path string, v Duration, example string) {
	if v.Duration < 0 {
		r.addf(path, "must not be negative; use a duration such as %s, got %q", example, v.Duration.String())
	}
}

func (r *report) positiveSize(path string, v Size, example string) {
	if v <= 0 {
		r.addf(path, "must be greater than zero, such as %s; got %s", example, fmt.Sprint(int64(v)))
	}
}

// validEnvName accepts what a POSIX shell could export: letters, digits
// and underscores, not starting with a digit.
func validEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
