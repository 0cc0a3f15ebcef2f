package scrub

import (
	"regexp/syntax"
	"strings"
)

// The rules of gitleaks (https://github.com/gitleaks/gitleaks, MIT License)
// are imported at build time: genrules reads config/gitleaks.toml from the
// gitleaks module and writes gitleaks_rules.go, which is committed. To move
// to another gitleaks release, change the version below and run
// `go generate ./internal/scrub` (it needs the module proxy, or the module
// in the module cache), then the tests.
//
//go:generate go run ./internal/genrules -version v8.30.1 -o gitleaks_rules.go

// glRule is a gitleaks rule as written in its configuration.
type glRule struct {
	ID          string
	Regex       string
	Path        string // the files gitleaks applies the rule to; see fromGitleaks
	SecretGroup int
	Entropy     float64
	Keywords    []string
	Allowlists  []glAllowlist
}

// glAllowlist is a gitleaks allowlist as written in its configuration.
type glAllowlist struct {
	Condition   string // "AND", or "OR" when empty
	RegexTarget string // "secret" (when empty), "match" or "line"
	Commits     []string
	Paths       []string
	Regexes     []string
	StopWords   []string
	TargetRules []string
}

// gitleaksTokenEnd is what gitleaks requires after a token: a quote,
// white space, a semicolon, an escaped line break or the end of the text.
// tokenEnd accepts any character that cannot continue a token but an
// opening parenthesis (a function name), and a full stop that ends a
// sentence, so that a token followed by a comma, a closing parenthesis or an
// ampersand in a log line or a URL is found too.
const (
	gitleaksTokenEnd = `(?:[\x60'"\s;]|\\[nr]|$)`
	tokenEnd         = `(?:[^0-9A-Za-z_+/=.(-]|\.(?:[^0-9A-Za-z_]|$)|$)`
)

// fromGitleaks makes a rule of a gitleaks rule, with gitleaks' semantics:
// it runs on texts holding one of its keywords, its secret is the secret
// group (or the first non-empty group, or the whole match), a secret whose
// entropy does not exceed the rule's threshold is dropped, and so is one
// that the rule's or the global allowlists allow.
//
// Where gitleaks restricts a rule to some files (Path), the rule runs on
// every text here: a prompt has no file names, and a Kubernetes secret or
// a Terraform password pasted into a goal is still a secret.
//
// A rule for a token with a distinctive prefix (\b(prefix...) followed by
// gitleaks' token end) accepts any character that cannot continue the
// token after it (tokenEnd).
//
// A pattern that is an alternation without an anchor (see shape) becomes
// one rule per alternative, under the same name, when its secret is the
// first non-empty group: the alternatives can then be anchored one by one.
func fromGitleaks(g glRule) []*rule {
	r := fromGitleaks1(g)
	if g.SecretGroup != 0 || len(r.shape().anchors) > 0 || r.shape().whole.Op != syntax.OpAlternate {
		return []*rule{r}
	}
	var out []*rule
	for _, alt := range r.shape().whole.Sub {
		g1 := g
		g1.Regex = pattern(alt)
		out = append(out, fromGitleaks1(g1))
	}
	return out
}

func fromGitleaks1(g glRule) *rule {
	pattern := g.Regex
	if fix, ok := gitleaksPatternFixes[g.ID]; ok {
		pattern = strings.Replace(pattern, fix[0], fix[1], 1)
	}
	if (strings.HasPrefix(pattern, `\b(`) || strings.HasPrefix(pattern, `(?i)\b(`)) &&
		strings.HasSuffix(pattern, gitleaksTokenEnd) && strings.Count(pattern, gitleaksTokenEnd) == 1 {
		pattern = strings.TrimSuffix(pattern, gitleaksTokenEnd) + tokenEnd
	}
	r := &rule{
		name:     g.ID,
		pattern:  pattern,
		group:    groupAuto,
		entropy:  g.Entropy,
		allow:    g.Allowlists,
		gitleaks: true,
	}
	if g.SecretGroup > 0 {
		r.group = g.SecretGroup
	}
	for _, k := range g.Keywords {
		r.keywords = append(r.keywords, strings.ToLower(k))
	}
	r.check = gitleaksChecks[g.ID]
	return r
}

// gitleaksPatternFixes change a part of a few gitleaks patterns (old, new);
// TestGitleaksPatternFixes checks that the old part is still there.
var gitleaksPatternFixes = map[string][2]string{
	// Slack's workflow and trigger URLs are longer than gitleaks' limit of
	// 56 characters after the kind, which would leave the end of the
	// secret in the text.
	"slack-webhook-url": {`[A-Za-z0-9+/]{43,56}`, `[A-Za-z0-9+/]{43,}`},
}

// gitleaksChecks narrow a few gitleaks rules for prompts.
var gitleaksChecks = map[string]func(hit) (int, int, bool){
	// With "sourcegraph" anywhere in a text, gitleaks takes any 40 hex
	// digits for a token; git prints commit hashes as 40 lower-case hex
	// digits, and a prompt holds many.
	"sourcegraph-access-token": func(h hit) (int, int, bool) {
		return h.start, h.end, !isGitHash(h.text[h.start:h.end])
	},
	// gitleaks' generic rule takes any value of 10 characters or more and of
	// entropy above 3.5 after a key name: also a token shown cut short
	// (ops_eyJzaWdu...) and a value typed by counting up
	// (xoxp-1234567890), which madeUp leaves out.
	"generic-api-key": func(h hit) (int, int, bool) {
		return h.start, h.end, !madeUp(h.text[h.start:h.end])
	},
}

// isGitHash reports whether s is 40 lower-case hex digits.
func isGitHash(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
