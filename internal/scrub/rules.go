// NOTICE
//
// Many of the patterns and keyword lists below are adapted from the default
// rule set of gitleaks (https://github.com/gitleaks/gitleaks), and several rule
// names follow its rule ids. gitleaks is distributed under the MIT License:
//
//	Copyright (c) 2019 Zachary Rice
//
//	Permission is hereby granted, free of charge, to any person obtaining a copy
//	of this software and associated documentation files (the "Software"), to deal
//	in the Software without restriction, including without limitation the rights
//	to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
//	copies of the Software, and to permit persons to whom the Software is
//	furnished to do so, subject to the following conditions:
//
//	The above copyright notice and this permission notice shall be included in all
//	copies or substantial portions of the Software.
//
//	THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
//	IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
//	FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
//	AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
//	LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
//	OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
//	SOFTWARE.
//
// Differences from gitleaks: the patterns are rewritten for Go's RE2 engine and
// for redaction rather than reporting (gitleaks' entropy thresholds are replaced
// by a placeholder check, trailing-context groups are dropped so that a token
// glued to other text is still redacted, and the private-key rule also handles
// wrapped, indented, escaped and truncated blocks). The url-password, secret-assignment,
// npmrc-auth-token and gcp-oauth-client-secret rules are this package's own.

package scrub

import (
	"regexp"
	"strings"
)

// Rule is one secret format.
//
// Every default rule's match contains one of its Keywords, and every default
// rule except private-key matches within a single line. Redact relies on
// both: it runs a default rule only over the lines that contain one of its
// keywords (secret-assignment on each such line on its own, private-key from
// the first such line to the end of the text).
type Rule struct {
	// Name appears in the redaction marker [REDACTED:<Name>] and as the key of
	// the counts Redact returns.
	Name    string
	Pattern *regexp.Regexp
	// Keywords is a cheap prefilter: the rule runs only where one keyword
	// appears, compared case-insensitively (secret-assignment, whose matches
	// hold them in upper case, compares them exactly). Empty means the rule
	// always runs over the whole text.
	Keywords []string
	// Group is the submatch to redact; 0 redacts the whole match.
	Group int

	// multiline marks a rule whose matches may span lines.
	multiline bool
	// perLine marks a rule applied to each line on its own, so that ^ and $
	// stand for the line's ends and an anchored pattern is tried once per
	// line instead of at every position.
	perLine bool
	// exactKeywords makes the keyword prefilter case-sensitive.
	exactKeywords bool
	// find, when set, is a faster equivalent of Pattern.FindAllStringIndex
	// over text[from:], with offsets into text.
	find func(text string, from int) [][2]int
	// check, when set, vets a match [start,end) of text: it may narrow the
	// span and reports false when the match is not a secret (a placeholder,
	// a documentation example, a bare header).
	check func(text string, start, end int) (int, int, bool)
}

// DefaultRules returns the built-in rules in priority order: when matches of
// several rules overlap, the merged redaction is named after the rule that
// comes first. The result is a fresh copy; changing it does not affect New.
func DefaultRules() []Rule {
	out := make([]Rule, len(defaultRules))
	for i, r := range defaultRules {
		r.Keywords = append([]string(nil), r.Keywords...)
		out[i] = r
	}
	return out
}

// assignValue is the value of a NAME=value assignment: a quoted string, or an
// unquoted word that does not start like a shell expansion or a call.
const assignValue = `("[^"\r\n]{8,}"|'[^'\r\n]{8,}'|[^\s"'` + "`" + `$\[\]{}()<>;,=][^\s"'` + "`" + `\[\]{}()<>;,]{7,})` +
	`(?:[ \t\r"'` + "`" + `;,]|$)`

var defaultRules = []Rule{
	{
		Name:      "private-key",
		Pattern:   regexp.MustCompile(pemPattern),
		Keywords:  []string{"private key"},
		multiline: true,
		find:      scanPEM,
		check:     checkPEM,
	},
	{
		Name:     "github-fine-grained-pat",
		Pattern:  regexp.MustCompile(`github_pat_[0-9A-Za-z_]{82}`),
		Keywords: []string{"github_pat_"},
		check:    checkToken,
	},
	{
		Name:     "github-pat",
		Pattern:  regexp.MustCompile(`ghp_[0-9A-Za-z]{36}`),
		Keywords: []string{"ghp_"},
		check:    checkToken,
	},
	{
		Name:     "github-oauth",
		Pattern:  regexp.MustCompile(`gho_[0-9A-Za-z]{36}`),
		Keywords: []string{"gho_"},
		check:    checkToken,
	},
	{
		Name:     "github-app-token",
		Pattern:  regexp.MustCompile(`gh[us]_[0-9A-Za-z]{36}`),
		Keywords: []string{"ghu_", "ghs_"},
		check:    checkToken,
	},
	{
		Name:     "github-refresh-token",
		Pattern:  regexp.MustCompile(`ghr_[0-9A-Za-z]{36}`),
		Keywords: []string{"ghr_"},
		check:    checkToken,
	},
	{
		Name:     "gitlab-pat",
		Pattern:  regexp.MustCompile(`\bglpat-[0-9A-Za-z_-]{20,}(?:\.[0-9a-z]{2,9})*`),
		Keywords: []string{"glpat-"},
		check:    checkToken,
	},
	{
		Name: "gitlab-token",
		Pattern: regexp.MustCompile(`\b(?:gl(?:dt|ptt|rt|ft|imt|agent|oas|soat|ffct|cbt)-[0-9A-Za-z_-]{20,}(?:\.[0-9a-z]{2,9})*` +
			`|GR1348941[0-9A-Za-z_-]{20,})`),
		Keywords: []string{"gldt-", "glptt-", "glrt-", "glft-", "glimt-", "glagent-", "gloas-", "glsoat-", "glffct-", "glcbt-", "gr1348941"},
		check:    checkToken,
	},
	{
		Name:     "aws-access-token",
		Pattern:  regexp.MustCompile(`\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`),
		Keywords: []string{"a3t", "akia", "asia", "abia", "acca"},
		check:    checkTokenNot("EXAMPLE"),
	},
	{
		Name:     "anthropic-api-key",
		Pattern:  regexp.MustCompile(`\bsk-ant-[0-9A-Za-z_-]{32,}`),
		Keywords: []string{"sk-ant-"},
		check:    checkToken,
	},
	{
		Name:     "openai-api-key",
		Pattern:  regexp.MustCompile(`\bsk-(?:(?:proj|svcacct|admin)-[0-9A-Za-z_-]{40,}|[0-9A-Za-z]{32,})`),
		Keywords: []string{"sk-"},
		check:    checkToken,
	},
	{
		Name:     "slack-token",
		Pattern:  regexp.MustCompile(`\bxox[abeoprs]-[0-9A-Za-z-]{10,}`),
		Keywords: []string{"xoxa-", "xoxb-", "xoxe-", "xoxo-", "xoxp-", "xoxr-", "xoxs-"},
		check:    checkToken,
	},
	{
		Name:     "slack-app-token",
		Pattern:  regexp.MustCompile(`(?i)\bxapp-\d-[A-Z0-9]+-\d+-[A-Z0-9]+`),
		Keywords: []string{"xapp-"},
		check:    checkToken,
	},
	{
		Name:     "slack-webhook-url",
		Pattern:  regexp.MustCompile(`(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[0-9A-Za-z+/]{43,}`),
		Keywords: []string{"hooks.slack.com"},
		check:    checkToken,
	},
	{
		Name:     "gcp-api-key",
		Pattern:  regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`),
		Keywords: []string{"aiza"},
		check:    checkToken,
	},
	{
		Name:     "gcp-oauth-client-secret",
		Pattern:  regexp.MustCompile(`\bGOCSPX-[0-9A-Za-z_-]{28}`),
		Keywords: []string{"gocspx-"},
		check:    checkToken,
	},
	{
		Name:     "stripe-access-token",
		Pattern:  regexp.MustCompile(`\b[rs]k_(?:live|test|prod)_[0-9A-Za-z]{10,}`),
		Keywords: []string{"sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"},
		check:    checkToken,
	},
	{
		Name:     "npm-access-token",
		Pattern:  regexp.MustCompile(`(?i)\bnpm_[0-9A-Z]{36,}`),
		Keywords: []string{"npm_"},
		check:    checkToken,
	},
	{
		Name:     "pypi-upload-token",
		Pattern:  regexp.MustCompile(`pypi-AgEIcHlwaS5vcmc[0-9A-Za-z_-]{50,}`),
		Keywords: []string{"pypi-ageichlwas5vcmc"},
		check:    checkToken,
	},
	{
		Name:     "huggingface-access-token",
		Pattern:  regexp.MustCompile(`\bhf_[A-Za-z]{34}\b`),
		Keywords: []string{"hf_"},
		check:    checkToken,
	},
	{
		Name:     "digitalocean-token",
		Pattern:  regexp.MustCompile(`\bdo[opr]_v1_[0-9a-f]{64}`),
		Keywords: []string{"doo_v1_", "dop_v1_", "dor_v1_"},
		check:    checkToken,
	},
	{
		Name:     "sendgrid-api-token",
		Pattern:  regexp.MustCompile(`\bSG\.[0-9A-Za-z_-]{22}\.[0-9A-Za-z_-]{43}`),
		Keywords: []string{"sg."},
		check:    checkToken,
	},
	{
		Name:     "shopify-token",
		Pattern:  regexp.MustCompile(`shp(?:at|ca|pa|ss)_[0-9A-Fa-f]{32}`),
		Keywords: []string{"shpat_", "shpca_", "shppa_", "shpss_"},
		check:    checkToken,
	},
	{
		Name:     "vault-token",
		Pattern:  regexp.MustCompile(`\bhv[sb]\.[0-9A-Za-z_-]{90,}`),
		Keywords: []string{"hvs.", "hvb."},
		check:    checkToken,
	},
	{
		Name:     "databricks-api-token",
		Pattern:  regexp.MustCompile(`\bdapi[0-9a-f]{32}(?:-\d)?\b`),
		Keywords: []string{"dapi"},
		check:    checkToken,
	},
	{
		Name:     "age-secret-key",
		Pattern:  regexp.MustCompile(`AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`),
		Keywords: []string{"age-secret-key-1"},
		check:    checkToken,
	},
	{
		Name:     "jwt",
		Pattern:  regexp.MustCompile(`\beyJ[0-9A-Za-z_-]{10,}\.eyJ[0-9A-Za-z_-]{10,}\.[0-9A-Za-z_-]*`),
		Keywords: []string{"eyj"},
		check:    checkToken,
	},
	{
		// scheme://user:password@host; only the password is redacted.
		Name:     "url-password",
		Pattern:  regexp.MustCompile(`\b[A-Za-z][0-9A-Za-z+.-]{1,20}://[^\s:@/?#\[\]"'<>]*:([^\s@/?#\[\]"'<>]+)@`),
		Keywords: []string{"://"},
		Group:    1,
		check:    checkNotPlaceholder,
	},
	{
		// aws_secret_access_key = ..., AWS_SECRET_ACCESS_KEY=..., "SecretAccessKey": "..."
		Name: "aws-secret-access-key",
		Pattern: regexp.MustCompile(`(?im)\b(?:aws[_.-]?)?secret(?:_access_|-access-|\.access\.|access)key["']?[ \t]*(?::=|=>|[=:])[ \t]*["']?` +
			`([0-9A-Za-z/+=]{40})(?:[^0-9A-Za-z/+=\n]|$)`),
		Keywords: []string{"secret_access_key", "secretaccesskey", "secret-access-key", "secret.access.key"},
		Group:    1,
		check:    checkTokenNot("EXAMPLEKEY"),
	},
	{
		// //registry.npmjs.org/:_authToken=... and the _auth / _password forms.
		Name:     "npmrc-auth-token",
		Pattern:  regexp.MustCompile(`(?m)(?:^|[ \t:"'])(?:_authToken|_auth|_password)[ \t]*=[ \t]*` + assignValue),
		Keywords: []string{"_auth", "_password"},
		Group:    1,
		check:    checkNotPlaceholder,
	},
	{
		// Environment-style assignments at the start of a line (dotenv files,
		// shell exports, compose and CI environment lists): an upper-case name
		// ending in PASSWORD, PASSWD, TOKEN, SECRET, _KEY, _PASS or _PWD.
		Name: "secret-assignment",
		Pattern: regexp.MustCompile(`^[ \t]*(?:export[ \t]+|-[ \t]+)?["']?` +
			`(?:[A-Z0-9_]*(?:PASSWORD|PASSWD)|(?:[A-Z0-9_]*_)?(?:TOKEN|SECRET)|[A-Z0-9_]*_(?:KEY|PASS|PWD))` +
			`["']?[ \t]*[=:][ \t]*` + assignValue),
		Keywords:      []string{"PASSWORD", "PASSWD", "TOKEN", "SECRET", "_KEY", "_PASS", "_PWD"},
		Group:         1,
		perLine:       true,
		exactKeywords: true,
		check:         checkAssignment,
	},
}

// checkToken rejects placeholders such as ghp_xxxxxxxx... or
// AKIAXXXXXXXXXXXXXXXX: a real token's tail is random, so its last 16 bytes
// hold many distinct characters.
func checkToken(text string, start, end int) (int, int, bool) {
	return start, end, !lowVariety(text[start:end])
}

// checkTokenNot is checkToken that also rejects tokens ending in suffix (the
// placeholders of vendor documentation, such as AKIAIOSFODNN7EXAMPLE).
func checkTokenNot(suffix string) func(string, int, int) (int, int, bool) {
	return func(text string, start, end int) (int, int, bool) {
		s := text[start:end]
		return start, end, !lowVariety(s) && !strings.HasSuffix(s, suffix)
	}
}

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

// placeholderRE matches values that stand for a secret without being one:
// shell and template expansions, format verbs, masks and stock words.
var placeholderRE = regexp.MustCompile(`(?i)^(?:` +
	`\$[A-Za-z_][A-Za-z0-9_]*|\$\{[^}]*\}|\$\([^)]*\)|\$\{\{.*\}\}|\{\{.*\}\}|<[^>]*>|%[sv]|%\([a-z_]+\)s|` +
	`\*+|x+|\.\.\.|password|passwd|pass|changeme|secret|token|example|redacted` +
	`)$`)

// checkNotPlaceholder rejects placeholder values; surrounding quotes are
// ignored for the comparison but stay part of the redaction.
func checkNotPlaceholder(text string, start, end int) (int, int, bool) {
	v := strings.Trim(text[start:end], `"'`)
	return start, end, !placeholderRE.MatchString(v)
}

// dottedIdentRE matches a reference such as settings.DB_PASSWORD.
var dottedIdentRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$`)

// checkAssignment rejects placeholders and unquoted references to other
// variables or attributes.
func checkAssignment(text string, start, end int) (int, int, bool) {
	v := text[start:end]
	if v[0] != '"' && v[0] != '\'' && dottedIdentRE.MatchString(v) {
		return start, end, false
	}
	return checkNotPlaceholder(text, start, end)
}
