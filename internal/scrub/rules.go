package scrub

import (
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
	rules = append(rules, ownFormatRules()...)
	rules = append(rules, context...)
	rules = append(rules, ownContextRules()...)
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
	return append(ownFormatRules(), ownContextRules()...)
}

// ownFormatRules find secrets by their format. Besides the formats
// gitleaks leaves out, they catch the families whose prefixes SPEC §9
// names at every length their keys have had, where gitleaks matches only
// the current shape: an AWS key id with any digits, an OpenAI key without
// its T3BlbkFJ marker or of the shorter project format, any Anthropic key,
// a Slack token with shorter numeric parts. A match that gitleaks' rule
// finds too is named after gitleaks' rule, which comes first.
func ownFormatRules() []*rule {
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
			// AWS access key ids: gitleaks takes base32 digits (2-7) only.
			name:    "aws-access-key-id",
			pattern: `\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`,
			check:   checkAWSKeyID,
		},
		{
			// OpenAI's legacy user keys, sk- and 48 letters and digits, with
			// or without the T3BlbkFJ marker gitleaks requires.
			name:    "openai-key",
			pattern: `\b(sk-[0-9A-Za-z]{48})` + tokenEnd,
			group:   1,
			check:   checkMixedToken,
		},
		{
			// OpenAI's project, service-account and admin keys, in the
			// short format (48 characters after the kind) and the long one
			// (156), and user keys without a project (sk-None-).
			name:    "openai-key",
			pattern: `\b(sk-(?:proj|svcacct|admin|None)-[0-9A-Za-z_-]{40,})` + tokenEnd,
			group:   1,
			check:   checkMixedToken,
		},
		{
			// Anthropic keys of any kind and version (api03, admin01, ...)
			// and length, besides gitleaks' exact 108-character shape.
			name:    "anthropic-key",
			pattern: `\b(sk-ant-[0-9A-Za-z_-]{32,})` + tokenEnd,
			group:   1,
			check:   checkMixedToken,
		},
		{
			// Slack bot, user, workspace, session and refresh tokens with
			// numeric parts of 7 to 13 digits (gitleaks wants 10 to 13 in
			// user tokens) and a random tail.
			name:    "slack-token",
			pattern: `\bxox[abposr]-(?:[0-9]{1,2}-)?(?:[0-9]{7,13}-){1,3}[0-9A-Za-z]{20,}\b`,
			check:   checkSlackToken,
		},
	}
}

// ownContextRules find secrets by their context: a key name, a URL, a
// header, a .netrc line.
func ownContextRules() []*rule {
	return []*rule{
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
