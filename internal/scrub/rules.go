package scrub

import (
	"regexp"
	"strings"
	"sync"
)

// builtinRules returns the built-in rules in priority order: when the
// matches of several rules overlap, the merged redaction is named after the
// rule that comes first. Rules for a format come before rules that find a
// secret by its context (a key name, a header, a command line), so that a
// token in an assignment or a curl command is named after its format:
// this package's private-key rule (which stands in for gitleaks' own),
// gitleaks' format rules, this package's format rules, gitleaks' context
// rules, this package's context rules, and gitleaks' generic-api-key last.
var builtinRules = sync.OnceValue(func() []*rule {
	rules := []*rule{privateKeyRule()}
	var context []*rule
	var generic []*rule
	for _, g := range gitleaksRules {
		switch {
		case g.ID == "private-key":
		case g.ID == "generic-api-key":
			generic = fromGitleaks(g)
		case isContextRule(g):
			context = append(context, fromGitleaks(g)...)
		default:
			rules = append(rules, fromGitleaks(g)...)
		}
	}
	own := ownRules()
	formats := 2 // anthropic-oauth-token, gcp-oauth-client-secret
	rules = append(rules, own[:formats]...)
	rules = append(rules, context...)
	rules = append(rules, own[formats:]...)
	rules = append(rules, generic...)
	return rules
})

// gitleaksAssignment is the operator gitleaks' rules for key names use.
const gitleaksAssignment = `(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`

// isContextRule reports whether a gitleaks rule finds secrets by their
// context rather than by their format.
func isContextRule(g glRule) bool {
	return strings.Contains(g.Regex, gitleaksAssignment) || strings.HasPrefix(g.ID, "curl-") || g.Path != ""
}

// builtinIndex indexes the built-in rules' keywords and anchors. User rules
// have neither and come after the built-in ones, so every Scrubber shares it.
var builtinIndex = sync.OnceValue(func() *needleIndex { return buildIndex(builtinRules()) })

// ownRules are the formats gitleaks' default rules leave out or find only
// in some shapes, and that a prompt is likely to carry.
func ownRules() []*rule {
	return []*rule{
		{
			// Claude's OAuth access and refresh tokens (gitleaks knows the
			// API keys only).
			name:    "anthropic-oauth-token",
			pattern: `\bsk-ant-o[ar]t\d\d-[0-9A-Za-z_-]{32,}`,
			check:   checkValue,
		},
		{
			// Google OAuth client secrets.
			name:    "gcp-oauth-client-secret",
			pattern: `\bGOCSPX-[0-9A-Za-z_-]{28}`,
			check:   checkValue,
		},
		{
			// aws_secret_access_key = ..., AWS_SECRET_ACCESS_KEY=...,
			// "SecretAccessKey": "..." (gitleaks' generic rule misses the keys
			// that start with / or +).
			name: "aws-secret-access-key",
			pattern: `(?i)\b(?:aws[_.-]?)?secret(?:_access_|-access-|\.access\.|access)key["']?[ \t]*(?::=|=>|[=:])[ \t]*["']?` +
				`([0-9A-Za-z/+=]{40})(?:[^0-9A-Za-z/+=]|$)`,
			group: 1,
			check: checkAWSSecret,
		},
		{
			// scheme://user:password@host; only the password is redacted.
			name:    "url-password",
			pattern: `\b[A-Za-z][0-9A-Za-z+.-]{1,20}://[^\s:@/?#\[\]"'<>]*:([^\s@/?#\[\]"'<>]+)@`,
			group:   1,
			check:   checkValue,
		},
		{
			// Environment-style assignments anywhere in a line (dotenv files,
			// shell exports, compose and CI environment lists, a goal's first
			// line): an upper-case name ending in PASSWORD, PASSWD, TOKEN,
			// SECRET, _KEY, _PASS or _PWD.
			name: "secret-assignment",
			pattern: `[A-Z0-9_]{0,64}?(?:PASSWORD|PASSWD|TOKEN|SECRET|_KEY|_PASS|_PWD)["']?[ \t]*(?::=|=>|[=:])[ \t]*` +
				`("[^"\r\n]{8,}"|'[^'\r\n]{8,}'|[^\s"'` + "`" + `$\[\]{}()<>;,=][^\s"'` + "`" + `\[\]{}()<>;,]{7,})` +
				`(?:[ \t\r\n"'` + "`" + `;,)\]}&]|$)`,
			group: 1,
			check: checkEnvAssignment,
		},
		{
			// password: value, "passwd" => 'value', userPassword = "value"
			// in any case. An unquoted value must end its line (or a
			// list item), so that prose after a colon is left alone.
			name: "secret-assignment",
			pattern: `(?i)[A-Za-z0-9_.-]{0,64}?(?:password|passwd|passphrase)["']?[ \t]*(?::=|=>|[=:])[ \t]*` +
				`(?:"([^"\r\n]{6,})"|'([^'\r\n]{6,})'|([^\s"'` + "`" + `$\[\]{}()<>;,=][^\s"'` + "`" + `\[\]{}()<>;,]{5,})[ \t]*(?:[\r\n#;,)\]}&]|$))`,
			group: groupAuto,
			check: checkPasswordAssignment,
		},
		{
			// Authorization: Bearer <token>, in headers, curl lines, JSON
			// and logs.
			name:    "authorization-header",
			pattern: `(?i)\b(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?((?:bearer|basic|token|bot|digest|apikey|api-key|sso-key)[ \t]+)?([0-9A-Za-z._~+/=:-]{8,})`,
			group:   2,
			check:   checkAuthorization,
		},
		{
			// Bearer <token> without the header name.
			name:    "bearer-token",
			pattern: `(?i)\bbearer[ \t]+([0-9A-Za-z._~+/-]{20,}=*)`,
			group:   1,
			check:   checkTokenLike,
		},
		{
			// Azure connection strings: AccountKey=..., SharedAccessKey=...
			name:    "azure-access-key",
			pattern: `(?i)\b(?:AccountKey|SharedAccessKey|SharedSecretValue)[ \t]*=[ \t]*([0-9A-Za-z+/]{20,}={0,2})`,
			group:   1,
			check:   checkValue,
		},
		{
			// .netrc: machine <host> login <user> password <password>, on
			// one line or several.
			name: "netrc-password",
			pattern: `(?i)\b(?:machine[ \t]+\S+|default)(?:\s{1,8}(?:login|account|port|protocol)[ \t]+\S+){1,3}` +
				`\s{1,8}password[ \t]+(\S+)`,
			group: 1,
			check: checkValue,
		},
	}
}

func privateKeyRule() *rule {
	return &rule{
		name:     "private-key",
		keywords: []string{"private key"},
		find:     func(text string) [][2]int { return scanPEM(text, 0) },
		check: func(h hit) (int, int, bool) {
			return checkPEM(h.text, h.start, h.end)
		},
	}
}

// placeholderRE matches values that stand for a secret without being one:
// shell and template expansions, format verbs, masks and stock words.
var placeholderRE = regexp.MustCompile(`(?i)^(?:` +
	`\$[A-Za-z_][A-Za-z0-9_]*|\$\{[^}]*\}|\$\([^)]*\)|\$\{\{.*\}\}|\{\{.*\}\}|<[^>]*>|%[sv]|%\([a-z_]+\)s|` +
	`\*+|x+|\.+|-+|password|passwd|pass|changeme|changeit|secret|token|example|redacted|string|required|optional|` +
	`none|null|nil|true|false|undefined|empty|hidden|masked|dummy|sample|default|placeholder|your[_-]?\w*|\w*[_-]here` +
	`)$`)

// looksPlaceholder reports whether v (quotes stripped) is a placeholder:
// a stock word, an expansion, or a value whose tail repeats a few
// characters (hf_xxxxxxxx..., AKIAXXXXXXXX...).
func looksPlaceholder(v string) bool {
	v = strings.Trim(v, "\"'`")
	return placeholderRE.MatchString(v) || strings.Contains(strings.ToLower(v), "example") || lowVariety(v)
}

// lowVariety reports whether the last 16 bytes of s (all of it, when
// shorter) hold fewer than four distinct characters; a generated secret's
// tail is random.
func lowVariety(s string) bool {
	if len(s) > 16 {
		s = s[len(s)-16:]
	}
	var seen [256]bool
	n := 0
	for i := 0; i < len(s); i++ {
		if !seen[s[i]] {
			seen[s[i]] = true
			n++
		}
	}
	return n < 4
}

// checkValue rejects placeholder values; surrounding quotes are ignored for
// the comparison but stay part of the redaction.
func checkValue(h hit) (int, int, bool) {
	return h.start, h.end, !looksPlaceholder(h.text[h.start:h.end])
}

// dottedIdentRE matches a reference such as settings.DB_PASSWORD.
var dottedIdentRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$`)

// isIdentByte reports whether c can be part of an identifier or a shell
// expansion, so that a name preceded by it is part of a longer name.
func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// checkEnvAssignment checks the name of an upper-case assignment: it must
// be a whole name (not the tail of a longer identifier), and TOKEN and
// SECRET must be the whole name or follow an underscore; and an unquoted
// value must not be a reference to another variable or attribute.
func checkEnvAssignment(h hit) (int, int, bool) {
	if h.from > 0 && isIdentByte(h.text[h.from-1]) {
		return 0, 0, false
	}
	end := h.from
	for end < len(h.text) && (h.text[end] == '_' || '0' <= h.text[end] && h.text[end] <= '9' || 'A' <= h.text[end] && h.text[end] <= 'Z') {
		end++
	}
	name := h.text[h.from:end]
	for _, word := range []string{"TOKEN", "SECRET"} {
		if strings.HasSuffix(name, word) && len(name) > len(word) && name[len(name)-len(word)-1] != '_' {
			return 0, 0, false
		}
	}
	v := h.text[h.start:h.end]
	if v[0] != '"' && v[0] != '\'' && dottedIdentRE.MatchString(v) {
		return 0, 0, false
	}
	return h.start, h.end, !looksPlaceholder(v)
}

// checkPasswordAssignment checks a password assignment in any case: the
// name is whole and the value is neither a placeholder nor a reference.
func checkPasswordAssignment(h hit) (int, int, bool) {
	if h.from > 0 && isIdentByte(h.text[h.from-1]) {
		return 0, 0, false
	}
	v := h.text[h.start:h.end]
	if h.group(3) != "" && dottedIdentRE.MatchString(v) {
		return 0, 0, false
	}
	return h.start, h.end, !looksPlaceholder(v)
}

// checkAuthorization accepts a credential after a scheme (Bearer, Basic,
// ...); without one, only a value that looks generated (20 or more
// characters with a digit).
func checkAuthorization(h hit) (int, int, bool) {
	if h.group(1) == "" {
		return checkTokenLike(h)
	}
	return checkValue(h)
}

// checkAWSSecret rejects placeholders and AWS's documentation key.
func checkAWSSecret(h hit) (int, int, bool) {
	if strings.HasSuffix(h.text[h.start:h.end], "EXAMPLEKEY") {
		return 0, 0, false
	}
	return checkValue(h)
}

// checkTokenLike accepts values of 20 or more characters with a digit that
// are not placeholders.
func checkTokenLike(h hit) (int, int, bool) {
	v := h.text[h.start:h.end]
	if len(v) < 20 || !strings.ContainsAny(v, "0123456789") {
		return 0, 0, false
	}
	return checkValue(h)
}
