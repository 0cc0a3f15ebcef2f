package scrub

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

var pemRE = regexp.MustCompile(pemPattern)

// pemCorpus gathers texts around private keys: the rule's fixtures, wrapped
// and truncated blocks, and pieces that stress the pattern's edges.
func pemCorpus() []string {
	var out []string
	for _, c := range ruleCases() {
		if c.rule != "private-key" {
			continue
		}
		for _, p := range c.tps {
			out = append(out, p.in)
		}
		out = append(out, c.fps...)
	}
	key := pemBlock("corpus", "RSA PRIVATE KEY", 300, []string{"Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC,00FF"}, "", "\n")
	for _, cut := range []int{10, 31, 32, 40, 80, 150, len(key) - 20, len(key) - 1} {
		out = append(out, key[:cut], key[:cut]+"\nFAIL: x", key[:cut]+"[truncated]")
	}
	out = append(out,
		benchPrompt(8<<10),
		"-----BEGIN RSA PRIVATE KEY-----\r\nAAAA\r\r\n-----END RSA PRIVATE KEY-----",
		`-----BEGIN EC PRIVATE KEY-----\r\nAAAA\nBBBB\\n-----END EC PRIVATE KEY-----`,
		"-----BEGIN PRIVATE KEY-----\n  Comment: a-b\\c\nAAAA-----END PRIVATE KEY------",
		"----BEGIN PRIVATE KEY----\n"+fake("c4", b64Std, 64)+"\n----END PRIVATE KEY----",
		"-----BEGIN PRIVATE KEY----------BEGIN PRIVATE KEY-----",
		"-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: 1\n\n"+fake("pgp", b64Std, 64)+"\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----",
		"x-----BEGIN  PRIVATE KEY-----\n\\",
		"-----BEGIN PRIVATE KEY-----\nHash:\n-----END PRIVATE KEY",
	)
	return out
}

func TestScanPEMMatchesPattern(t *testing.T) {
	for i, in := range pemCorpus() {
		checkScanPEM(t, i, in)
	}
}

func checkScanPEM(t *testing.T, i int, in string) {
	t.Helper()
	var want [][2]int
	for _, loc := range pemRE.FindAllStringIndex(in, -1) {
		want = append(want, [2]int{loc[0], loc[1]})
	}
	if got := scanPEM(in, 0); !slices.Equal(got, want) {
		t.Errorf("input %d %q:\nscanPEM %v\npattern %v", i, in, got, want)
	}
	// Starting part-way through gives the matches of the rest.
	if k := strings.IndexByte(in, '\n'); k > 0 {
		want = want[:0]
		for _, loc := range pemRE.FindAllStringIndex(in[k:], -1) {
			want = append(want, [2]int{k + loc[0], k + loc[1]})
		}
		if got := scanPEM(in, k); !slices.Equal(got, want) {
			t.Errorf("input %d from %d:\nscanPEM %v\npattern %v", i, k, got, want)
		}
	}
}

func FuzzScanPEM(f *testing.F) {
	for _, in := range pemCorpus() {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		checkScanPEM(t, 0, in)
	})
}
