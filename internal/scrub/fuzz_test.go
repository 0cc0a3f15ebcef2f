package scrub

import (
	"strings"
	"testing"
)

// FuzzRedact checks, for arbitrary text, that Redact does not panic, that it
// is idempotent (redacting the output again changes nothing and counts
// nothing), that its counts agree with the markers it wrote, and that the
// text between markers is the input's text, in order.
func FuzzRedact(f *testing.F) {
	for _, c := range ruleCases() {
		for _, tok := range c.tokens {
			f.Add(tok)
			f.Add("x=" + tok + tok + "\n" + tok[:len(tok)/2])
		}
		for _, p := range c.tps {
			f.Add(p.in)
		}
		for _, fp := range c.fps {
			f.Add(fp)
		}
	}
	f.Add(benchPrompt(4 << 10))
	f.Add("[REDACTED:github-pat]ghp_" + fake("fuzz", alnum, 36) + "[REDACTED:")
	f.Add("https://u:[REDACTED:x]" + fake("fuzz2", alnum, 10) + "@h")
	f.Add("-----BEGIN RSA PRIVATE KEY-----\n" + fake("fuzz3", b64Std, 64) + "\n-----BEGIN EC PRIVATE KEY-----\n-----END RSA PRIVATE KEY-----")

	plain := mustNew(f, Options{Enabled: true})
	rich := mustNew(f, Options{
		Enabled: true,
		Environ: []string{"FUZZ_TOKEN=abcdefgh", "FUZZ_SECRET=REDACTED:", "FUZZ_PASSWORD=]ghp_AAAA"},
		Allow:   []string{"ghp_" + strings.Repeat("Ab1", 12), "aaaa"},
		Extra:   []UserRule{{Name: "fuzz-rule", Regex: `(?s)zz.{0,40}?zz`}},
	})
	f.Fuzz(func(t *testing.T, in string) {
		for _, s := range []*Scrubber{plain, rich} {
			out, counts := s.Redact(in)
			again, more := s.Redact(out)
			if again != out || len(more) != 0 {
				t.Fatalf("not idempotent:\n in %q\nout %q\nagain %q (%v)", in, out, again, more)
			}
			total := 0
			for _, n := range counts {
				total += n
			}
			if total == 0 && out != in {
				t.Fatalf("text changed without a count:\n in %q\nout %q", in, out)
			}
			if got, want := len(findMarkers(out)), len(findMarkers(in))+total; got > want || got < total {
				t.Fatalf("counts %v do not match the markers:\n in %q\nout %q", counts, in, out)
			}
			if total > 0 && !isSubsequenceOutsideMarkers(in, out) {
				t.Fatalf("output is not the input with parts replaced:\n in %q\nout %q", in, out)
			}
		}
	})
}

// isSubsequenceOutsideMarkers reports whether the text of out, with its
// markers removed, appears in order in in: redaction only removes text.
func isSubsequenceOutsideMarkers(in, out string) bool {
	pos := 0
	for _, m := range findMarkers(out) {
		piece := out[pos:m.start]
		i := strings.Index(in, piece)
		if i < 0 {
			return false
		}
		in = in[i+len(piece):]
		pos = m.end
	}
	return strings.Contains(in, out[pos:])
}
