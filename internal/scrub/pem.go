package scrub

import (
	"strings"

	"github.com/runner-cli/runner/internal/lazyregexp"
)

// A private-key block is the BEGIN marker, then lines of base64 or of
// RFC 1421 / OpenPGP armor headers, then the END marker. Lines may be
// separated by real newlines (\n or \r\n) or by the two-character escapes \n
// and \r\n (a key inside a JSON or shell string), and may carry indentation,
// quotes, string concatenation or comment prefixes; a key flattened onto one
// line (spaces for newlines) matches too. A block whose END marker is missing
// (a truncated log) matches as far as its lines look like part of a key;
// checkPEM then cuts it back to the last line that holds key material.
//
// The BEGIN and END markers follow gitleaks' private-key rule (MIT License,
// Copyright (c) 2019 Zachary Rice; see the notice in rules.go).
//
// pemPattern is the definition. Go's RE2 automaton needs about 100 ns per
// byte for it, so Redact runs scanPEM instead, a direct implementation of the
// same leftmost-first match; TestScanPEMMatchesPattern and FuzzScanPEM hold
// the two to each other.
const (
	pemBegin = `-{4,5} ?BEGIN[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)? ?-{4,5}`
	pemEnd   = `-{4,5} ?END[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)? ?-{4,5}`
	pemNL    = `(?:\r?\n|\\r\\n|\\n)`
	pemB64   = `[A-Za-z0-9+/=]`
	pemChar  = `[A-Za-z0-9+/= \t"',;>#*|]` // base64, indentation, quotes, prefixes
	pemFill  = `[ \t"'>#*|]*`
	pemHdr   = pemFill + `(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset|MessageID|Subject): ?[^\r\n\\]*`

	pemPattern = pemBegin + `(?:` + pemChar + `|` + pemNL + `(?:` + pemHdr + `)?)*(?:` + pemEnd + `)?`
)

var (
	pemBeginRE = lazyregexp.New(pemBegin)
	pemEndRE   = lazyregexp.New(`^` + pemEnd)
	// pemEndSuffixRE tells a complete block from a truncated one.
	pemEndSuffixRE = lazyregexp.New(pemEnd + `\z`)

	pemCharSet = byteSet(`ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/= ` + "\t" + `"',;>#*|`)
	pemFillSet = byteSet(" \t\"'>#*|")
	pemHeaders = []string{"Proc-Type:", "DEK-Info:", "Version:", "Comment:", "Hash:", "Charset:", "MessageID:", "Subject:"}
)

func byteSet(chars string) (set [256]bool) {
	for i := 0; i < len(chars); i++ {
		set[chars[i]] = true
	}
	return set
}

// scanPEM returns the matches of pemPattern in text[from:], as
// FindAllStringIndex would, with offsets into text.
func scanPEM(text string, from int) [][2]int {
	var out [][2]int
	for pos := from; pos < len(text); {
		loc := pemBeginRE.FindStringIndex(text[pos:])
		if loc == nil {
			break
		}
		start := pos + loc[0]
		end := pemExtend(text, pos+loc[1])
		out = append(out, [2]int{start, end})
		pos = end
	}
	return out
}

// pemExtend follows the greedy loop of pemPattern from i, the end of a BEGIN
// marker, and the optional END marker after it. Every alternative the loop
// prefers can always be followed by a successful rest of the pattern (the
// rest is optional), so the leftmost-first match takes the first alternative
// that applies at each step and never backtracks.
func pemExtend(text string, i int) int {
	for i < len(text) {
		c := text[i]
		if pemCharSet[c] {
			i++
			continue
		}
		// pemNL: \r?\n, then the escapes \r\n and \n, in that order.
		switch {
		case c == '\r' && i+1 < len(text) && text[i+1] == '\n':
			i += 2
		case c == '\n':
			i++
		case c == '\\' && strings.HasPrefix(text[i:], `\r\n`):
			i += 4
		case c == '\\' && strings.HasPrefix(text[i:], `\n`):
			i += 2
		default:
			if loc := pemEndRE.FindStringIndex(text[i:]); loc != nil {
				return i + loc[1]
			}
			return i
		}
		i = pemHeader(text, i)
	}
	return i
}

// pemHeader returns the end of the optional armor header line at i (the
// start of a line), or i when there is none.
func pemHeader(text string, i int) int {
	j := i
	for j < len(text) && pemFillSet[text[j]] {
		j++
	}
	for _, h := range pemHeaders {
		if strings.HasPrefix(text[j:], h) {
			j += len(h)
			for j < len(text) && text[j] != '\r' && text[j] != '\n' && text[j] != '\\' {
				j++
			}
			return j
		}
	}
	return i
}

// pemKeyRE finds the base64 run that makes a line part of a key rather than
// prose; a line of a real key body holds 64 or 70 such characters, only the
// last line may be shorter.
var pemKeyRE = lazyregexp.New(pemB64 + `{16}`)

// checkPEM vets a private-key match. A match that ends without an END marker
// is cut back to its last line holding key material (dropping the line
// breaks, quotes and words that followed the truncated key), and a match
// without any key material (a bare BEGIN marker in code or documentation) is
// rejected.
func checkPEM(text string, start, end int) (int, int, bool) {
	m := text[start:end]
	body := strings.Index(m, "KEY") // the BEGIN marker ends with "KEY-----" or "KEY BLOCK-----"
	if body < 0 {
		return start, end, false
	}
	if !pemEndSuffixRE.MatchString(m[body:]) {
		for {
			nl, width := lastLineBreak(m)
			if nl <= body || pemKeyRE.MatchString(m[nl+width:]) {
				break
			}
			m = m[:nl]
		}
		m = strings.TrimRight(m, " \t\"',;>#*|")
	}
	return start, start + len(m), pemKeyRE.MatchString(m[body:])
}

// lastLineBreak returns the offset and width of the last real (\n, \r\n) or
// escaped (\n, \r\n written as two characters each) line break in s, or -1.
func lastLineBreak(s string) (int, int) {
	real := strings.LastIndexByte(s, '\n')
	if esc := strings.LastIndex(s, `\n`); esc > real {
		if esc >= 2 && s[esc-2:esc] == `\r` {
			return esc - 2, 4
		}
		return esc, 2
	}
	if real >= 1 && s[real-1] == '\r' {
		return real - 1, 2
	}
	return real, 1
}
