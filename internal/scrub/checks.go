package scrub

// The checks a rule's match goes through before it is redacted: what a
// value must look like to be a secret (not a placeholder, a path, an
// identifier, a made-up or counting value, a concatenation in code), and
// the shapes of the key families SPEC §9 names by prefix.

import (
	"strings"

	"github.com/runner-cli/runner/internal/lazyregexp"
)

// placeholderRE matches values that stand for a secret without being one:
// shell and template expansions, format verbs, masks and stock words.
var placeholderRE = lazyregexp.New(`(?i)^(?:` +
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
var dottedIdentRE = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$`)

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
	if (v[0] == '"' || v[0] == '\'') && concatenation(v[1:len(v)-1]) {
		return 0, 0, false
	}
	if isPasswordName(name) {
		if passwordReference(v) {
			return 0, 0, false
		}
	} else if !generatedValue(v) || nonSecretKeyNameRE.MatchString(name) {
		return 0, 0, false
	}
	return h.start, h.end, !looksPlaceholder(v)
}

// concatRE matches what a quoted value holds when its quotes are those of
// two string literals joined by an operator ("DB_PASSWORD=" + pw + "..."),
// or the quote of an outer literal and its end ("password='" . $pw . "'").
var concatRE = lazyregexp.New(`^["'\x60]?[ \t]*(?:\+|\.\.?|\|\||&|,)[ \t]`)

// concatenation reports whether v, the text between a value's quotes, is
// code that joins strings rather than a value.
func concatenation(v string) bool {
	return concatRE.MatchString(v)
}

// isPasswordName reports whether an upper-case assignment's name names a
// password, which a person chooses, rather than a key, token or secret,
// which a service generates.
func isPasswordName(name string) bool {
	return strings.Contains(name, "PASSWORD") || strings.Contains(name, "PASSWD") ||
		strings.HasSuffix(name, "_PASS") || strings.HasSuffix(name, "_PWD")
}

// nonSecretKeyNameRE matches the names of keys and tokens that are no
// secrets: database and cache keys, CSRF and pagination tokens (gitleaks'
// generic rule allows most of these names too).
var nonSecretKeyNameRE = lazyregexp.New(`(?:^|_)(?:` +
	`(?:PRIMARY|FOREIGN|UNIQUE|COMPOSITE|NATURAL|SORT|PARTITION|RANGE|SHARD|CACHE|BUCKET|SCHEMA|SEQUENCE|IDEMPOTENCY|LOOKUP|ROW|HOT|IDX|INDEX)_KEY|` +
	`(?:CSRF|XSRF|NEXT|PAGE|PAGINATION|CONTINUATION|CANCELLATION)_TOKEN)$`)

var (
	// pathValueRE matches a file path in lower case: a generated secret
	// with slashes (base64) has upper-case letters.
	pathValueRE = lazyregexp.New(`^(?:~|\.{1,2})?/?[a-z0-9_.@-]+(?:/[a-z0-9_.@-]+)+/?$`)
	// identValueRE matches an identifier without digits: snake_case,
	// kebab-case, camelCase, PascalCase, and HTTP header names.
	identValueRE = lazyregexp.New(`^(?:[a-z]+(?:[_-][a-z]+)*|[A-Za-z][a-z]+(?:[A-Z][a-z]+)+|X(?:-[A-Za-z][a-z]*|-[A-Z]+)+)$`)
	// intLiteralRE matches an integer constant of 64 bits at most in hex
	// (an ioctl number); a private key in hex is longer.
	intLiteralRE = lazyregexp.New(`^0[xX][0-9a-fA-F]{1,16}$`)
)

// generatedValue reports whether v (quotes stripped) can be the value of a
// key, a token or a secret that a service generated: 10 characters or more
// (the shortest value gitleaks' generic rule takes), neither elided nor
// counting (see madeUp), and neither a file path, an identifier, an
// integer constant nor a plain number (MAX_TOKENS=4096000000).
func generatedValue(v string) bool {
	v = strings.Trim(v, "\"'`")
	return len(v) >= 10 && !madeUp(v) && !pathValueRE.MatchString(v) && !identValueRE.MatchString(v) &&
		!intLiteralRE.MatchString(v) && !plainNumber(v)
}

// madeUp reports whether v, a value where a generated secret is expected,
// was written by hand: it ends in an ellipsis (a token shown cut short, as
// documentation and tools show them), or it holds 8 consecutive digits or
// letters counting up or down (1234567890, abcdefgh), which a random string
// holds at a given place once in 10^7 (digits only) or less.
func madeUp(v string) bool {
	v = strings.Trim(v, "\"'`")
	if strings.HasSuffix(v, "...") || strings.HasSuffix(v, "\u2026") {
		return true
	}
	return countingRun(v) >= 8
}

// countingRun returns the length of the longest run of digits or letters
// of one case in v that counts up or down by one (9 is followed by 0 when
// counting up, as on a keyboard: 1234567890).
func countingRun(v string) int {
	if v == "" {
		return 0
	}
	best, up, down := 1, 1, 1
	for i := 1; i < len(v); i++ {
		a, b := v[i-1], v[i]
		if sameClass(a, b) && (b == a+1 || a == '9' && b == '0') {
			up++
		} else {
			up = 1
		}
		if sameClass(a, b) && (b+1 == a || a == '0' && b == '9') {
			down++
		} else {
			down = 1
		}
		best = max(best, up, down)
	}
	return best
}

func sameClass(a, b byte) bool {
	digit := func(c byte) bool { return '0' <= c && c <= '9' }
	lower := func(c byte) bool { return 'a' <= c && c <= 'z' }
	upper := func(c byte) bool { return 'A' <= c && c <= 'Z' }
	return digit(a) && digit(b) || lower(a) && lower(b) || upper(a) && upper(b)
}

// passwordReference reports whether v, the value of a password, is rather a
// reference to one or a message about one: an identifier of several words
// without digits that names a password (hashedPassword,
// password_confirmation), or a sentence with the word password ("Password
// must contain a digit").
func passwordReference(v string) bool {
	u := strings.Trim(v, "\"'`")
	lower := strings.ToLower(u)
	if !strings.Contains(lower, "pass") && !strings.Contains(lower, "pwd") && !strings.Contains(lower, "secret") {
		return false
	}
	return compoundIdentRE.MatchString(u) || strings.Contains(u, " ") && passwordWordRE.MatchString(u)
}

var (
	// compoundIdentRE matches an identifier of two words or more without
	// digits: snake_case, kebab-case, camelCase or PascalCase.
	compoundIdentRE = lazyregexp.New(`^(?:[a-z]+(?:[_-][a-z]+)+|[A-Za-z][a-z]+(?:[A-Z][a-z]+)+)$`)
	// passwordWordRE matches the word password (or passphrase) in a
	// sentence.
	passwordWordRE = lazyregexp.New(`(?i)\bpass(?:word|phrase)s?\b`)
)

// checkPasswordAssignment checks a password assignment in any case: the
// name is whole and the value is neither a placeholder nor a reference.
func checkPasswordAssignment(h hit) (int, int, bool) {
	if h.from > 0 && isIdentByte(h.text[h.from-1]) {
		return 0, 0, false
	}
	v := h.text[h.start:h.end]
	quoted := h.group(1) != "" || h.group(2) != ""
	if h.group(3) != "" && dottedIdentRE.MatchString(v) || passwordReference(v) || quoted && concatenation(v) {
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

// checkAWSKeyID rejects AWS's documentation ids (...EXAMPLE), placeholders,
// made-up ids and, as gitleaks does, ids of entropy 3 or less.
func checkAWSKeyID(h hit) (int, int, bool) {
	v := h.text[h.start:h.end]
	if shannonEntropy(v) <= 3 || madeUp(v) {
		return 0, 0, false
	}
	return checkValue(h)
}

// keyPrefixRE matches the fixed part of an OpenAI or Anthropic key: sk-,
// and the kind (ant-api03-, proj-, ...).
var keyPrefixRE = lazyregexp.New(`^sk-(?:ant-(?:[a-z]+[0-9]{2}-)?|(?:proj|svcacct|admin|None)-)?`)

// checkMixedToken accepts a key whose random part looks generated: upper-
// and lower-case letters and digits, entropy above 4 (a random string of 32
// characters or more has about 4.5 to 5), not made up and not a
// placeholder. A word or an identifier after the prefix
// (sk-admin-dashboard-...) is none.
func checkMixedToken(h hit) (int, int, bool) {
	v := h.text[h.start:h.end]
	r := v[len(keyPrefixRE.FindString(v)):]
	if !strings.ContainsAny(r, "0123456789") || !strings.ContainsAny(r, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") ||
		!strings.ContainsAny(r, "abcdefghijklmnopqrstuvwxyz") || shannonEntropy(r) <= 4 || madeUp(r) {
		return 0, 0, false
	}
	return checkValue(h)
}

// checkSlackToken accepts a Slack token whose numeric parts do not count
// (1234567890) and whose tail is random: not a placeholder, and of entropy
// above 3.
func checkSlackToken(h hit) (int, int, bool) {
	v := h.text[h.start:h.end]
	tail := v[strings.LastIndexByte(v, '-')+1:]
	if madeUp(v) || shannonEntropy(tail) <= 3 || looksPlaceholder(tail) {
		return 0, 0, false
	}
	return h.start, h.end, true
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
