package scrub

import (
	"encoding/base64"
	"sort"
	"strings"
)

// Encoded secrets are found as gitleaks finds them (its detect/codec
// package, MIT License, Copyright (c) 2019 Zachary Rice): runs of base64
// (16 characters or more), hex (32 or more) and percent-encoding that
// decode to printable ASCII are replaced by their decoded text, the rules
// run again over the result, and a secret found in decoded text redacts
// the encoded text it came from. Decoding repeats, for text encoded more
// than once, up to maxDecodeDepth times. (gitleaks also decodes \uXXXX
// escapes; this package does not.)
const maxDecodeDepth = 5

// A piece is a part of a decoded text: either text copied from the
// original (linear: offsets map one to one) or decoded text, which maps to
// the whole encoded span it came from.
type piece struct {
	start, end   int // in the decoded text
	oStart, oEnd int // in the original text
	linear       bool
	depth        int // the decoding pass that made it; 0 for original text
}

// toOrig maps offset i of a decoded text made of pieces to the original
// text: to the start of the encoded span when i is in decoded text, or to
// its end when end is set.
func toOrig(pieces []piece, i int, end bool) int {
	k := sort.Search(len(pieces), func(k int) bool { return pieces[k].end > i })
	if end {
		k = sort.Search(len(pieces), func(k int) bool { return pieces[k].end >= i })
	}
	if k == len(pieces) {
		p := pieces[len(pieces)-1]
		return p.oEnd
	}
	p := pieces[k]
	switch {
	case p.linear:
		return p.oStart + i - p.start
	case end:
		return p.oEnd
	}
	return p.oStart
}

// findDecoded returns the secrets found in the decoded forms of text, as
// spans of text. markers are the redaction markers in text; no encoded run
// is taken from inside one.
func (s *Scrubber) findDecoded(text string, markers []span) []span {
	var out []span
	cur := text
	pieces := []piece{{start: 0, end: len(text), oStart: 0, oEnd: len(text), linear: true}}
	for depth := 1; depth <= maxDecodeDepth; depth++ {
		segs := encodedRuns(cur, markers)
		if len(segs) == 0 {
			break
		}
		var b strings.Builder
		var next, fresh []piece
		last := 0
		// copy appends cur[from:to] to b, with its pieces.
		copyText := func(from, to int) {
			shift := b.Len() - from
			b.WriteString(cur[from:to])
			k := sort.Search(len(pieces), func(k int) bool { return pieces[k].end > from })
			for ; k < len(pieces) && pieces[k].start < to; k++ {
				p := pieces[k]
				lo, hi := max(p.start, from), min(p.end, to)
				q := piece{start: lo + shift, end: hi + shift, oStart: p.oStart, oEnd: p.oEnd, linear: p.linear, depth: p.depth}
				if p.linear {
					q.oStart, q.oEnd = p.oStart+lo-p.start, p.oStart+hi-p.start
				}
				next = append(next, q)
			}
		}
		for _, sg := range segs {
			copyText(last, sg.start)
			p := piece{
				start: b.Len(), end: b.Len() + len(sg.decoded),
				oStart: toOrig(pieces, sg.start, false), oEnd: toOrig(pieces, sg.end, true),
				depth: depth,
			}
			b.WriteString(sg.decoded)
			next = append(next, p)
			fresh = append(fresh, p)
			last = sg.end
		}
		copyText(last, len(cur))
		cur, pieces = b.String(), next
		markers = findMarkers(cur)

		near := make([]span, len(fresh))
		for i, p := range fresh {
			near[i] = span{start: p.start, end: p.end}
		}
		for _, sp := range s.findPlain(cur, markers, nearLines(cur, near), false) {
			// As in gitleaks, a match that does not touch text this pass
			// decoded was found before.
			m := span{start: sp.match[0], end: sp.match[1]}
			if m.end == 0 {
				m = sp
			}
			if !overlapsAny(fresh, m) {
				continue
			}
			sp.start, sp.end = toOrig(pieces, sp.start, false), toOrig(pieces, sp.end, true)
			sp.match = [2]int{}
			out = append(out, sp)
		}
	}
	return out
}

// overlapsAny reports whether sp overlaps one of the pieces (in order).
func overlapsAny(pieces []piece, sp span) bool {
	k := sort.Search(len(pieces), func(k int) bool { return pieces[k].end > sp.start })
	return k < len(pieces) && pieces[k].start < sp.end
}

// encoded is a run of encoded text and what it decodes to.
type encoded struct {
	start, end int
	decoded    string
}

var (
	b64Chars    = byteSet(`ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_/+-`)
	hexChars    = byteSet(`0123456789abcdefABCDEF`)
	likelyB64   = byteSet(`0123456789+/-_`) // gitleaks tries only runs holding one of these
	likelyHex   = byteSet(`0123456789`)
	printableOK = func() (t [256]bool) {
		for c := 0x09; c < 0x7f; c++ {
			t[c] = true
		}
		return t
	}()
)

// encodedRuns finds the encoded runs of text that decode to printable
// ASCII, in order, leaving out those that touch a marker.
func encodedRuns(text string, markers []span) []encoded {
	var out []encoded
	add := func(start, end int, decoded string) {
		if decoded == "" {
			return
		}
		k := sort.Search(len(markers), func(k int) bool { return markers[k].end >= start })
		if k < len(markers) && markers[k].start <= end {
			return
		}
		out = append(out, encoded{start, end, decoded})
	}
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '%' && i+2 < len(text) && hexChars[text[i+1]] && hexChars[text[i+2]]:
			// %XX, then anything on the line, up to the last %XX.
			end := i + 3
			for j := end; j+2 < len(text) && text[j] != '\n'; j++ {
				if text[j] == '%' && hexChars[text[j+1]] && hexChars[text[j+2]] {
					end = j + 3
				}
			}
			add(i, end, decodePercent(text[i:end]))
			i = end
		case b64Chars[c]:
			j := i
			for j < len(text) && b64Chars[text[j]] {
				j++
			}
			h := i
			for h < j && hexChars[text[h]] {
				h++
			}
			if h-i >= 32 {
				// A hex run takes precedence; what follows it is a run of its own.
				add(i, h, decodeHex(text[i:h]))
				i = h
				continue
			}
			if j-i >= 16 {
				k := j
				for k < len(text) && k-j < 2 && text[k] == '=' {
					k++
				}
				add(i, k, decodeBase64(text[i:k]))
				i = k
				continue
			}
			i = j
		default:
			i++
		}
	}
	return out
}

func hasAny(s string, set *[256]bool) bool {
	for i := 0; i < len(s); i++ {
		if set[s[i]] {
			return true
		}
	}
	return false
}

func printable(b []byte) bool {
	for _, c := range b {
		if !printableOK[c] {
			return false
		}
	}
	return true
}

func decodeBase64(s string) string {
	if !hasAny(s, &likelyB64) {
		return ""
	}
	var scratch [512]byte
	buf := scratch[:]
	if n := base64.RawURLEncoding.DecodedLen(len(s)) + 3; n > len(buf) {
		buf = make([]byte, n)
	}
	// Standard base64 needs whole groups of four; base64url without padding
	// cannot end with a single character of a group.
	if len(s)%4 == 0 {
		if n, err := base64.StdEncoding.Decode(buf, []byte(s)); err == nil && printable(buf[:n]) {
			return string(buf[:n])
		}
	}
	if len(s)%4 != 1 && !strings.ContainsAny(s, "+/=") {
		if n, err := base64.RawURLEncoding.Decode(buf, []byte(s)); err == nil && printable(buf[:n]) {
			return string(buf[:n])
		}
	}
	return ""
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func decodeHex(s string) string {
	if len(s)%2 != 0 || !hasAny(s, &likelyHex) {
		return ""
	}
	b := make([]byte, len(s)/2)
	for i := range b {
		b[i] = unhex(s[2*i])<<4 | unhex(s[2*i+1])
		if !printableOK[b[i]] {
			return ""
		}
	}
	return string(b)
}

func decodePercent(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && hexChars[s[i+1]] && hexChars[s[i+2]] {
			c := unhex(s[i+1])<<4 | unhex(s[i+2])
			if !printableOK[c] {
				return ""
			}
			b = append(b, c)
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}
