package inert

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTextAndLine(t *testing.T) {
	tests := []struct {
		name, in, text, line string
	}{
		{"plain", "did the parser", "did the parser", "did the parser"},
		{"empty", "", "", ""},
		{"unicode kept", "café — 日本語 ✓ \ufffd", "café — 日本語 ✓ \ufffd", "café — 日本語 ✓ \ufffd"},
		{"backslashes kept", `C:\dir \x1b`, `C:\dir \x1b`, `C:\dir \x1b`},
		{"clear screen", "a\x1b[2Jb", `a\x1b[2Jb`, `a\x1b[2Jb`},
		{"carriage return overwrite", "FAILED\rALL TESTS PASSED", `FAILED\rALL TESTS PASSED`, `FAILED\rALL TESTS PASSED`},
		{"osc 52 clipboard", "\x1b]52;c;ZWNobyBoaQ==\a", `\x1b]52;c;ZWNobyBoaQ==\a`, `\x1b]52;c;ZWNobyBoaQ==\a`},
		{"nul", "a\x00b", `a\x00b`, `a\x00b`},
		{"named C0", "\b\f\v", `\b\f\v`, `\b\f\v`},
		{"other C0", "\x01\x1f", `\x01\x1f`, `\x01\x1f`},
		{"del", "a\x7fb", `a\x7fb`, `a\x7fb`},
		{"C1 csi", "a\u009b2Jb", `a\u009b2Jb`, `a\u009b2Jb`},
		{"C1 range ends", "\u0080\u009f\u00a0", `\u0080\u009f` + "\u00a0", `\u0080\u009f` + "\u00a0"},
		{"bidi override", "abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
		{"bidi embeddings and isolates", "\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069", `\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`, `\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`},
		{"bidi neighbours kept", "\u2029\u202f\u2065\u206a", "\u2029\u202f\u2065\u206a", "\u2029\u202f\u2065\u206a"},
		{"newline", "line one\nline two", "line one\nline two", `line one\nline two`},
		{"tab", "a\tb", "a\tb", `a\tb`},
		{"crlf", "a\r\nb", "a\\r\nb", `a\r\nb`},
		{"invalid utf-8", "a\x9bb\xff", `a\x9bb\xff`, `a\x9bb\xff`},
		{"cut utf-8", "é"[:1], `\xc3`, `\xc3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Text(tt.in); got != tt.text {
				t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.text)
			}
			if got := Line(tt.in); got != tt.line {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
			}
		})
	}
}

// Each escaped character is written as strconv.Quote writes it.
func TestEscapesLikeQuote(t *testing.T) {
	for r := rune(0); r < 0x2070; r++ {
		if !unsafeRune(r, false) {
			continue
		}
		want := strconv.QuoteRune(r)
		want = want[1 : len(want)-1]
		if got := Line(string(r)); got != want {
			t.Errorf("Line(%U) = %s, strconv.QuoteRune gives %s", r, got, want)
		}
	}
}

func TestLines(t *testing.T) {
	in := []string{"a\nb", "c"}
	got := Lines(in)
	if got[0] != `a\nb` || got[1] != "c" || in[0] != "a\nb" {
		t.Errorf("Lines(%q) = %q (input now %q)", []string{"a\nb", "c"}, got, in)
	}
}

// A string with nothing to escape is returned as it is, without copying.
func TestNoAllocationWhenSafe(t *testing.T) {
	s := strings.Repeat("a plain summary line — ✓\n", 20)
	if n := testing.AllocsPerRun(100, func() { Text(s) }); n != 0 {
		t.Errorf("Text of safe text allocates %v times", n)
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "a\x1b[2J\rb\x00", "\u202e\u0085\xff\n\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Text(s), Line(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("escape(%q) = %q: not valid UTF-8", s, out)
			}
			for _, r := range out {
				if unsafeRune(r, true) {
					t.Fatalf("escape(%q) = %q holds %U", s, out, r)
				}
			}
		}
		if strings.ContainsAny(Line(s), "\n\t") {
			t.Fatalf("Line(%q) = %q holds a newline or tab", s, Line(s))
		}
		if strings.Count(Text(s), "\n") != strings.Count(s, "\n") {
			t.Fatalf("Text(%q) = %q changed the number of lines", s, Text(s))
		}
		if firstUnsafe(s, false) < 0 && (Line(s) != s || Text(s) != s) {
			t.Fatalf("safe %q changed", s)
		}
	})
}
