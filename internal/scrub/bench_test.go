package scrub

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

// The benchmark workload imitates a 40 KiB prompt: contract text, a goal,
// git history, Go source, go test output with a failure, go.sum lines, a tree
// summary, and a handful of secrets (a token, an AWS key id, a private key, a
// database URL, a JWT and an environment value).

const benchGoSource = `// Package lexer turns source text into tokens.
package lexer

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode"
)

// Token is one lexical token and its position.
type Token struct {
	Kind  Kind
	Text  string
	Line  int
	Col   int
}

func (l *Lexer) NextToken() (Token, error) {
	l.skipSpace()
	if l.pos >= len(l.src) {
		return Token{Kind: EOF, Line: l.line, Col: l.col}, nil
	}
	c := l.src[l.pos]
	switch {
	case unicode.IsLetter(rune(c)):
		return l.ident(), nil
	case c == '"':
		return l.str()
	case strings.ContainsRune("+-*/=<>!", rune(c)):
		return l.operator(), nil
	}
	return Token{}, fmt.Errorf("line %d, column %d: unexpected character %q", l.line, l.col, c)
}

// keyFor returns the map key of a cache entry; the password field is never part of it.
func keyFor(u User) string { return u.Name + "/" + u.Email }
`

const benchTestOutput = `=== RUN   TestNextToken
=== RUN   TestNextToken/identifiers
=== RUN   TestNextToken/strings
    lexer_test.go:57: token 3: got {STRING "abc" 1 9}, want {STRING "abd" 1 9}
--- FAIL: TestNextToken (0.00s)
    --- PASS: TestNextToken/identifiers (0.00s)
    --- FAIL: TestNextToken/strings (0.00s)
=== RUN   TestKeyFor
--- PASS: TestKeyFor (0.00s)
FAIL
exit status 1
FAIL	example.com/lexer	0.014s
`

func benchHistory(i int) string {
	return fmt.Sprintf("- iteration %d: node 1.%d.%d attempt %d, commit %s (%s), guards: go vet ok, go test FAIL\n",
		i, i%7, i%3, i%3+1, fake(fmt.Sprint("hash", i), hexLower, 40), fake(fmt.Sprint("short", i), hexLower, 7))
}

func benchGoSum(i int) string {
	return fmt.Sprintf("github.com/example/mod%d v1.%d.0 h1:%s=\n", i, i, fake(fmt.Sprint("gosum", i), b64Std, 43))
}

func benchTree(i int) string {
	return fmt.Sprintf("  [%s] 1.%d %s (uuid %s-%s-4%s-a%s-%s)\n", []string{"x", " ", "!"}[i%3], i,
		"Implement the next part of the lexer and its tests",
		fake(fmt.Sprint("u1", i), hexLower, 8), fake(fmt.Sprint("u2", i), hexLower, 4), fake(fmt.Sprint("u3", i), hexLower, 3),
		fake(fmt.Sprint("u4", i), hexLower, 3), fake(fmt.Sprint("u5", i), hexLower, 12))
}

func benchSecrets() []string {
	return []string{
		"ghp_" + fake("bench-ghp", alnum, 36),
		"AKIA" + fake("bench-akia", upperNum, 16),
		pemBlock("bench-key", "RSA PRIVATE KEY", 1200, nil, "", "\n"),
		fake("bench-dbpass", alnum, 20),
		"eyJ" + fake("bench-jwt1", alnumExt, 33) + ".eyJ" + fake("bench-jwt2", alnumExt, 60) + "." + fake("bench-jwt3", alnumExt, 43),
		fake("bench-env", alnum, 32),
	}
}

func benchEnviron() []string {
	sec := benchSecrets()
	return []string{
		"HOME=/home/runner",
		"PATH=/usr/local/go/bin:/usr/bin:/bin",
		"OPENAI_API_KEY=" + sec[5],
		"GITHUB_TOKEN=" + "ghp_" + fake("bench-env-gh", alnum, 36),
		"DB_PASSWORD=" + fake("bench-env-pw", alnum, 16),
		"AWS_SECRET_ACCESS_KEY=" + fake("bench-env-aws", b64Std, 40),
	}
}

// benchPrompt builds a prompt-like text of about size bytes.
func benchPrompt(size int) string {
	sec := benchSecrets()
	var b strings.Builder
	b.WriteString("# Runner Contract\n\nYou work inside the repository. Make the smallest change that satisfies the acceptance criteria.\n\n")
	b.WriteString("# Goal\n\nThe lexer must report the position of every token. Use the token table; do not hard-code keys.\n\n")
	b.WriteString("# History\n\n")
	for i := range 30 {
		b.WriteString(benchHistory(i))
	}
	b.WriteString("- iteration 31: the agent printed the token " + sec[0] + " while debugging\n\n")
	b.WriteString("# Failure\n\n```\n")
	pieces := []func(int) string{
		func(int) string { return benchGoSource },
		func(int) string { return benchTestOutput },
		benchGoSum,
		benchTree,
		benchHistory,
	}
	secretAt := map[int]string{
		5:  "deploy.go:31: using credentials " + sec[1] + "\n",
		9:  "loaded signing key:\n" + sec[2] + "\n",
		13: "dial postgres://app:" + sec[3] + "@db.internal:5432/app: connection refused\n",
		17: "Authorization: Bearer " + sec[4] + "\n",
		21: "openai: invalid key " + sec[5] + "\n",
	}
	for i := 0; b.Len() < size-200; i++ {
		if s, ok := secretAt[i]; ok {
			b.WriteString(s)
		}
		b.WriteString(pieces[i%len(pieces)](i))
	}
	b.WriteString("```\n\n# Output Contract\n\nEnd with RESULT: done or RESULT: blocked.\n")
	return b.String()
}

// BenchmarkRedact measures a prompt-like text of 20 and 40 KiB with its
// handful of secrets, and the same text without them (the output of a first
// Redact: the common case of a prompt with no secrets), and a title: a
// prompt is scrubbed section by section, some of them short.
func BenchmarkRedact(b *testing.B) {
	s := mustNew(b, Options{Enabled: true, Environ: benchEnviron()})
	b.Run("title", func(b *testing.B) {
		reportCPU(b, func() { s.Redact("fix the lexer") })
	})
	for _, size := range []int{20 << 10, 40 << 10} {
		in := benchPrompt(size)
		clean, _ := s.Redact(in)
		for _, c := range []struct{ name, in string }{
			{fmt.Sprintf("%dKiB", size>>10), in},
			{fmt.Sprintf("%dKiB-clean", size>>10), clean},
		} {
			b.Run(c.name, func(b *testing.B) {
				b.SetBytes(int64(len(c.in)))
				b.ReportAllocs()
				reportCPU(b, func() { s.Redact(c.in) })
			})
		}
	}
}

// BenchmarkRedactWorst measures 40 KiB texts made to be expensive: every
// rule's keyword on every line (every rule runs, those without an anchor
// over the whole text), a secret on every line, assignments that pass every
// quick test and fail late, nested base64 that decodes to keywords, curl
// command lines (gitleaks' curl rules have no length bound), and texts where
// trying a rule at each of its starts would take quadratic time: one line of
// keywords, one line of curl commands, one of password= assignments, and
// Kubernetes secrets without data.
func BenchmarkRedactWorst(b *testing.B) {
	s := mustNew(b, Options{Enabled: true, Environ: benchEnviron()})
	for _, c := range worstCases() {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.in)))
			b.ReportAllocs()
			reportCPU(b, func() { s.Redact(c.in) })
		})
	}
}

type benchCase struct{ name, in string }

func worstCases() []benchCase {
	fill := func(line func(i int) string) string {
		var b strings.Builder
		for i := 0; b.Len() < 40<<10; i++ {
			b.WriteString(line(i))
		}
		return b.String()
	}
	var kws []string
	for _, r := range builtinRules() {
		kws = append(kws, r.keywords...)
	}
	soup := strings.Join(kws, " ")
	b64 := func(v string) string { return base64.StdEncoding.EncodeToString([]byte(v)) }
	return []benchCase{
		{"keywords", fill(func(i int) string { return soup + "\n" })},
		{"secrets", fill(func(i int) string {
			return fmt.Sprintf("GITHUB_TOKEN=ghp_%s api_key = %q\n", fake(fmt.Sprint("w-gh", i), alnum, 36), fake(fmt.Sprint("w-key", i), alnum, 32))
		})},
		{"near-misses", fill(func(i int) string {
			// Key names, operators and values that gitleaks' generic rule
			// reads to the end before a stop word or the entropy rejects them.
			return fmt.Sprintf("access_token_%d = %q; secret_key: example_value_%d, password=%s\n", i, strings.Repeat("ab", 40), i, strings.Repeat("x", 100))
		})},
		{"base64", fill(func(i int) string {
			return b64(b64(soup[:200]+" token = "+fake(fmt.Sprint("w-b64", i), alnum, 12))) + "\n"
		})},
		{"curl", fill(func(i int) string {
			return fmt.Sprintf("curl -s https://example.com/api/v%d/items?page=%d -o out%d.json && jq . out%d.json\n", i%3, i, i, i)
		})},
		{"one-line", strings.ReplaceAll(fill(func(i int) string { return soup + " " }), "\n", " ")},
		{"curl-one-line", fill(func(i int) string { return `curl -H "Authorization: x" ` })},
		{"password-one-line", fill(func(i int) string { return "password=" })},
		{"kind-secret", fill(func(i int) string { return "kind: Secret\ndata:\n  x: y\n" })},
	}
}

// BenchmarkNew measures what a Scrubber costs to make: New itself (with the
// runner's usual options; the runner keeps its Scrubber while the settings
// do not change), and the one-time work of a process, parsing every
// built-in pattern and indexing it, and compiling every rule (which
// happens only for the rules a text needs, the first time it needs them).
func BenchmarkNew(b *testing.B) {
	b.Run("New", func(b *testing.B) {
		o := Options{Enabled: true, Environ: benchEnviron(), Extra: []UserRule{{Name: "ticket", Regex: `TCK-[0-9]{6}`}}, Allow: []string{"not-a-secret"}}
		mustNew(b, o)
		reportCPU(b, func() { mustNew(b, o) })
	})
	fresh := func() []*rule {
		var rules []*rule
		for _, g := range gitleaksRules {
			rules = append(rules, fromGitleaks(g)...)
		}
		return append(rules, ownRules()...)
	}
	b.Run("index", func(b *testing.B) {
		reportCPU(b, func() { buildIndex(fresh()) })
	})
	b.Run("compile-all", func(b *testing.B) {
		reportCPU(b, func() {
			for _, r := range fresh() {
				r.matcher()
			}
		})
	})
}
