package scrub

import (
	"strings"
	"testing"
)

// TestDigestsAndNumbersStayReadable: content digests (OCI references,
// manifests, lock files) and plain numbers are no secrets, whatever key
// name stands before them; they were redacted by gitleaks' generic rule
// ("key_digest sha256:…") and by the runner's upper-case assignments
// (MAX_TOKEN=4096000000), and then wherever else they appeared.
func TestDigestsAndNumbersStayReadable(t *testing.T) {
	h256, h512 := fake("d256", hexLower, 64), fake("d512", hexLower, 128)
	s := mustNew(t, Options{Enabled: true, Environ: []string{"MAX_TOKENS=4096000000", "CACHE_TOKEN_TTL=86400000000"}})
	for _, in := range []string{
		"FROM alpine@sha256:" + h256,
		"FROM quay.io/keycloak/keycloak:24.0@sha256:" + h256 + " AS auth",
		"key_digest sha256:" + h256,
		"tokenizer sha256:" + h256,
		"api sha256:" + h256 + "\naccess sha512:" + h512,
		`"digest": "sha512:` + h512 + `"`,
		"SECRET=sha256:" + h256,
		`{"token": "sha256:` + h256 + `"}`,
		"cosign: ghcr.io/acme/app:sha256-" + h256 + ".sig",
		"MAX_TOKEN=4096000000",
		"COSIGN_KEY=4096000000",
		"export GITHUB_TOKEN_TTL=86_400_000_000",
		"max tokens 4096000000, TTL 86400000000",
		"auth_token: 94837262513472847392",
	} {
		if out, counts := s.Redact(in); out != in {
			t.Errorf("redacted %v:\n  %q\n  %q", counts, in, out)
		}
	}
}

// TestReadableIsNarrow: what looks like a digest or a number without
// being one is still judged as before: a secret inside a digest-like text
// of the wrong length, a number that is a password, keys with their
// prefixes next to a digest, and a [[scrub.rules]] rule that asks for
// digests.
func TestReadableIsNarrow(t *testing.T) {
	gh := "ghp_" + fake("narrow-gh", alnum, 36)
	aws := "AKIA" + fake("narrow-aws", upperNum, 16)
	slack := "xoxb-" + fake("narrow-slack1", digits, 12) + "-" + fake("narrow-slack2", digits, 13) + "-" + fake("narrow-slack3", alnum, 24)
	h256 := fake("narrow-d", hexLower, 64)
	s := mustNew(t, Options{Enabled: true, Environ: []string{"DB_PASSWORD=31415926535"},
		Extra: []UserRule{{Name: "pinned-image", Regex: `sha256:(?P<secret>[0-9a-f]{64})`}}})
	for _, tt := range []struct{ in, rule string }{
		{"image@sha256:" + h256 + " pushed with " + gh, "github-pat"},
		{"sha256:" + h256 + " " + aws, "aws-access-token"},
		{"layer sha256:" + h256 + "\nSLACK=" + slack, "slack-bot-token"},
		{"DB_PASSWORD=31415926535", "secret-assignment"},
		{"the pin is 31415926535", "env:DB_PASSWORD"},
		{"password: 12345678", "secret-assignment"},
	} {
		out, counts := s.Redact(tt.in)
		if counts[tt.rule] == 0 {
			t.Errorf("%q not redacted by %s: %q %v", tt.in, tt.rule, out, counts)
		}
		for _, secret := range []string{gh, aws, slack, "31415926535"} {
			if strings.Contains(tt.in, secret) && strings.Contains(out, secret) {
				t.Errorf("%q left %q: %q", tt.in, secret, out)
			}
		}
	}
	// The user's rule redacts the digest it asks for.
	if out, counts := s.Redact("FROM alpine@sha256:" + h256); counts["pinned-image"] != 1 || strings.Contains(out, h256) {
		t.Errorf("the user's rule: %q %v", out, counts)
	}
}

func TestInDigest(t *testing.T) {
	h := fake("in-digest", hexLower, 64)
	for _, tt := range []struct {
		text       string
		start, end int
		want       bool
	}{
		{"x@sha256:" + h, 9, 9 + 64, true},
		{"x@sha256:" + h, 2, 9 + 64, true},
		{`"sha256:` + h + `"`, 0, 8 + 64 + 1, true},
		{"x@sha256:" + h, 9, 9 + 40, true},
		{"x@sha256:" + h + "0", 9, 9 + 64, false},         // 65 hex digits
		{"x@sha256:" + h[:40], 9, 9 + 40, false},          // too short
		{"xsha256:" + h, 8, 8 + 64, false},                // not a word
		{"x@sha1:" + h[:40], 7, 7 + 40, false},            // not an algorithm kept
		{"x@sha256:" + h + "z", 9, 9 + 64, false},         // glued to a letter
		{"x@sha256:" + h + " key", 9 + 64, 9 + 68, false}, // the span is after it
	} {
		if got := inDigest(tt.text, tt.start, tt.end); got != tt.want {
			t.Errorf("inDigest(%q, %d, %d) = %v, want %v", tt.text, tt.start, tt.end, got, tt.want)
		}
	}
}
