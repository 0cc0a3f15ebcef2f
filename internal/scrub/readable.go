package scrub

import (
	"strings"
)

// What stays readable whatever rule matched it: content digests and
// plain numbers. Prompts about Dockerfiles, manifests and lock files are
// full of digests (alpine@sha256:…, "digest": "sha512:…"), and of large
// numbers (MAX_TOKENS=4096000000); neither is a secret, and a redacted one
// is also redacted wherever else it appears, which leaves an agent unable
// to read its own files.

// digestAlgos are the digest prefixes recognised, with the length of
// their hex: OCI references and manifests (sha256:, sha512:), cosign's
// tags (sha256-…), and SRI-like sha384.
var digestAlgos = []struct {
	name string
	hex  int
}{{"sha256", 64}, {"sha384", 96}, {"sha512", 128}}

// inDigest reports whether text[start:end] lies within a content digest:
// an algorithm name, ':' or '-', and exactly its number of hex digits, the
// whole standing alone (no letter or digit right before the name or after
// the hex).
func inDigest(text string, start, end int) bool {
	// The hex run around the span, and what comes before it.
	hs := start
	for hs > 0 && isHexByte(text[hs-1]) {
		hs--
	}
	he := end
	for he < len(text) && isHexByte(text[he]) {
		he++
	}
	if he < len(text) && isAlnumByte(text[he]) {
		return false
	}
	// The span may begin with the prefix itself ("sha256:…"), or with a
	// quote before it.
	for _, a := range digestAlgos {
		p := strings.Index(strings.ToLower(text[start:min(end, start+len(a.name)+2)]), a.name)
		if p >= 0 && p+len(a.name) < end-start {
			hexFrom := start + p + len(a.name) + 1
			if sep := text[hexFrom-1]; (sep == ':' || sep == '-') && hexRunIs(text, hexFrom, a.hex) && standsAlone(text, start+p) {
				return true
			}
		}
		// The span is (in) the hex after the prefix.
		if hs >= len(a.name)+1 && he-hs == a.hex {
			pre := hs - len(a.name) - 1
			if sep := text[hs-1]; (sep == ':' || sep == '-') && strings.EqualFold(text[pre:hs-1], a.name) && standsAlone(text, pre) {
				return true
			}
		}
	}
	return false
}

// hexRunIs reports whether text holds exactly n hex digits from i on.
func hexRunIs(text string, i, n int) bool {
	if i+n > len(text) {
		return false
	}
	for k := i; k < i+n; k++ {
		if !isHexByte(text[k]) {
			return false
		}
	}
	return i+n == len(text) || !isAlnumByte(text[i+n])
}

// standsAlone reports whether no letter or digit comes right before i:
// "sha256" there begins a word (after '@', ':', a quote or a space).
func standsAlone(text string, i int) bool {
	return i == 0 || !isAlnumByte(text[i-1])
}

func isHexByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isAlnumByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// plainNumber reports whether v, quotes and blanks aside, is a number:
// digits, with '.', ',' or '_' between groups. The value of a key, a
// token or a secret that a service generated is never one.
func plainNumber(v string) bool {
	v = strings.Trim(v, "\"'` \t")
	if v == "" || !isDigit(v[0]) || !isDigit(v[len(v)-1]) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isDigit(c) && c != '.' && c != ',' && c != '_' {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
