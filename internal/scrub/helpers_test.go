package scrub

import (
	"encoding/base64"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"testing"
)

// Test secrets are generated rather than written out, so that the source
// holds no string a secret scanner (or a push protection) would flag. The
// generator is seeded from a label, so every run sees the same values.

const (
	alnum    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	alnumExt = alnum + "_-"
	upperNum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	hexLower = "0123456789abcdef"
	letters  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	digits   = "0123456789"
	b64Std   = alnum + "+/"
)

func rng(label string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(label))
	return rand.New(rand.NewPCG(h.Sum64(), 0x5eed))
}

// fake returns n characters drawn from alphabet, determined by label.
func fake(label, alphabet string, n int) string {
	r := rng(label)
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// fakeBytes returns n pseudo-random bytes determined by label.
func fakeBytes(label string, n int) []byte {
	r := rng(label)
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// pemBlock builds a PEM-style block of the given type around n random bytes,
// wrapped at 64 columns, each line prefixed by indent and ended by nl.
func pemBlock(label, typ string, n int, headers []string, indent, nl string) string {
	body := base64.StdEncoding.EncodeToString(fakeBytes(label, n))
	var b strings.Builder
	b.WriteString(indent + "-----BEGIN " + typ + "-----" + nl)
	for _, h := range headers {
		b.WriteString(indent + h + nl)
	}
	if len(headers) > 0 {
		b.WriteString(nl)
	}
	for len(body) > 64 {
		b.WriteString(indent + body[:64] + nl)
		body = body[64:]
	}
	b.WriteString(indent + body + nl)
	b.WriteString(indent + "-----END " + typ + "-----")
	return b.String()
}

func mustNew(t testing.TB, o Options) *Scrubber {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatalf("New(%+v): %v", o, err)
	}
	return s
}

func marker(rule string) string { return "[REDACTED:" + rule + "]" }

// equalCounts compares counts with want, treating nil and empty alike.
func equalCounts(got, want map[string]int) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}
