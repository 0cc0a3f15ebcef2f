package scrub

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// wholeMatches is what rule r finds in text when its pattern runs over the
// whole text, as gitleaks runs it: the reference for r.matches, which tries
// the pattern only where the anchors, the extender and the sieve allow.
func wholeMatches(r *rule, text string) []found {
	re := wholeRE(r)
	var out []found
	for _, loc := range re.FindAllStringSubmatchIndex(text, -1) {
		out = r.accept(text, loc, loc[0], out)
	}
	return out
}

var wholeREs sync.Map // *rule -> *regexp.Regexp

func wholeRE(r *rule) *regexp.Regexp {
	if re, ok := wholeREs.Load(r); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(r.pattern)
	wholeREs.Store(r, re)
	return re
}

// checkAnchored compares, for every built-in rule with a pattern and a
// keyword in text, the anchored matches with the whole-text matches.
func checkAnchored(t *testing.T, text string) {
	t.Helper()
	x := builtinIndex()
	h := x.scan(text, nil)
	for i, r := range builtinRules() {
		if r.find != nil || !h.keyword[i] {
			continue
		}
		want := wholeMatches(r, text)
		got := r.matches(text, h.anchors[i], h.req[i], nil, nil)
		if !slices.Equal(got, want) {
			t.Errorf("rule %s on %q:\n anchored %v\n    whole %v", r.name, text, got, want)
		}
	}
}

// anchorCorpus is every sample of gitleaks' fixtures, every rule case, and
// a prompt-like text.
func anchorCorpus(t testing.TB) []string {
	var out []string
	for _, r := range loadGitleaksSamples(t).Rules {
		for _, e := range append(r.TPs, r.FPs...) {
			out = append(out, e.Text)
		}
	}
	for _, c := range ruleCases() {
		out = append(out, c.tokens...)
		out = append(out, c.fps...)
		for _, p := range c.tps {
			out = append(out, p.in)
		}
	}
	return append(out, benchPrompt(8<<10))
}

// TestAnchoredMatchesWholeText holds the matcher to gitleaks' way of
// running a rule: the same secrets, the same spans.
func TestAnchoredMatchesWholeText(t *testing.T) {
	for _, text := range anchorCorpus(t) {
		checkAnchored(t, text)
	}
	// Joined, so that matches meet other text and line breaks.
	checkAnchored(t, strings.Join(anchorCorpus(t)[:300], "\n"))
}

func FuzzAnchoredMatches(f *testing.F) {
	for i, text := range anchorCorpus(f) {
		if i%7 == 0 || len(text) > 4000 {
			f.Add(text)
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkAnchored(t, text)
	})
}
