// Package inert makes untrusted text safe to print on a terminal. Text
// that came from outside the runner (an agent's summary, questions and
// output, titles in tree.json, file names, logs) can hold escape
// sequences that clear the screen, move the cursor to overwrite a line,
// write the clipboard (OSC 52) or reorder what is shown (bidi overrides).
// Before such text reaches a terminal it goes through Text or Line, which
// write every control character in a visible, strconv.Quote-like form
// (`\x1b`, `\r`, `\u202e`), as git and less do.
//
// Escaped are: the C0 controls (U+0000–U+001F) except the newline and,
// in Text only, the tab; DEL (U+007F); the C1 controls (U+0080–U+009F);
// the Unicode bidi embeddings, overrides and isolates (U+202A–U+202E,
// U+2066–U+2069); and bytes that are not valid UTF-8 (a lone 0x9b is a
// CSI to an 8-bit terminal). Everything else, backslashes included, is
// left as it is: the point is that nothing acts on the terminal, not
// that the output can be parsed back (the --json outputs are for that).
package inert

import (
	"strings"
	"unicode/utf8"
)

// Text escapes s for a terminal, keeping its newlines and tabs, which are
// structure in multi-line text (a summary, an error, a log tail).
func Text(s string) string { return escape(s, true) }

// Line escapes s for a terminal as a one-line field (a title, a node
// path, a file name): newlines and tabs are escaped too, so the field
// cannot break the layout it is printed in.
func Line(s string) string { return escape(s, false) }

// Lines applies Line to each element of ss, returning a new slice.
func Lines(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Line(s)
	}
	return out
}

const hexDigits = "0123456789abcdef"

func escape(s string, multiline bool) string {
	i := firstUnsafe(s, multiline)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			writeByte(&b, s[i])
		case unsafeRune(r, multiline):
			writeRune(&b, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// firstUnsafe returns the index of the first byte of s that starts
// something to escape, or -1.
func firstUnsafe(s string, multiline bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if unsafeRune(rune(c), multiline) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || unsafeRune(r, multiline) {
			return i
		}
		i += size
	}
	return -1
}

func unsafeRune(r rune, multiline bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !multiline
	case r < 0x20, r == 0x7f:
		return true // C0 controls, DEL
	case r < 0x80:
		return false
	case r <= 0x9f:
		return true // C1 controls
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // bidi embeddings, overrides, isolates
	}
	return false
}

// writeRune writes r the way strconv.Quote would.
func writeRune(b *strings.Builder, r rune) {
	switch r {
	case '\a':
		b.WriteString(`\a`)
	case '\b':
		b.WriteString(`\b`)
	case '\f':
		b.WriteString(`\f`)
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\t':
		b.WriteString(`\t`)
	case '\v':
		b.WriteString(`\v`)
	default:
		if r < 0x80 {
			writeByte(b, byte(r))
			return
		}
		b.WriteString(`\u`)
		for shift := 12; shift >= 0; shift -= 4 {
			b.WriteByte(hexDigits[r>>uint(shift)&0xf])
		}
	}
}

// writeByte writes c as \xNN.
func writeByte(b *strings.Builder, c byte) {
	b.WriteString(`\x`)
	b.WriteByte(hexDigits[c>>4])
	b.WriteByte(hexDigits[c&0xf])
}
