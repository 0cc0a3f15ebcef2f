package scrub

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// gitleaksSamples is testdata/gitleaks/samples.json: the true-positive and
// false-positive samples of gitleaks' rule definitions.
type gitleaksSamples struct {
	Gitleaks string `json:"gitleaks"`
	Rules    []struct {
		ID  string          `json:"id"`
		TPs []gitleaksEntry `json:"tps"`
		FPs []gitleaksEntry `json:"fps"`
	} `json:"rules"`
}

type gitleaksEntry struct {
	Text    string   `json:"text"`
	Path    string   `json:"path"`
	Secrets []string `json:"secrets"`
	Flagged []string `json:"flagged"`
}

func loadGitleaksSamples(t testing.TB) *gitleaksSamples {
	t.Helper()
	b, err := os.ReadFile("testdata/gitleaks/samples.json")
	if err != nil {
		t.Fatal(err)
	}
	var s gitleaksSamples
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// Targets on gitleaks' own samples. maxFPRedacted holds for the plain
// false positives and for every false-positive sample that is no true
// positive elsewhere (see TestGitleaksSamples); maxAllFPRedacted, over all
// of them, is what the scrubber reaches (31 of 372), as a guard against
// regressions: the 22 samples that are true positives elsewhere cannot be
// left alone without leaving those true positives too, and the other 9 are
// random values after a key name that gitleaks' generic rule reports.
const (
	minRecall        = 0.95
	maxFPRedacted    = 0.03
	maxAllFPRedacted = 0.084
)

// TestGitleaksSamples runs every sample of gitleaks' rule definitions
// through the Scrubber. A true positive counts as redacted when none of the
// secrets gitleaks reports for it is left in the output; a false positive
// counts as redacted when anything in it is.
//
// Two kinds of false-positive samples are true positives elsewhere, and are
// counted apart besides the figure over all samples:
//   - another family's key, which gitleaks' default rules report under a
//     format rule of their own (a Cloudflare origin CA key among the
//     samples of the Cloudflare API key rule, an Anthropic admin key among
//     those of the API key rule); the test requires that the Scrubber names
//     its redaction after that rule;
//   - the text of a true positive of the same rule, given with a file name
//     the rule is not for (a prompt has no file names, so the two cannot be
//     told apart).
func TestGitleaksSamples(t *testing.T) {
	samples := loadGitleaksSamples(t)
	s := mustNew(t, Options{Enabled: true})
	var tps, tpHit, tpPath, tpNoText, fpNoText int
	var all, allHit, plain, plainHit, family, familyHit, same, sameHit, genericHit int
	missByRule := map[string]int{}
	fpByRule := map[string]int{}
	for _, r := range samples.Rules {
		tpTexts := map[string]bool{}
		for _, tp := range r.TPs {
			tpTexts[tp.Text] = true
		}
		for _, tp := range r.TPs {
			if tp.Text == "" {
				tpNoText++ // a rule on file names only
				continue
			}
			tps++
			if tp.Path != "" {
				tpPath++
			}
			out, _ := s.Redact(tp.Text)
			ok := true
			for _, sec := range tp.Secrets {
				if sec != "" && strings.Contains(out, sec) {
					ok = false
				}
			}
			if ok {
				tpHit++
			} else {
				missByRule[r.ID]++
				if testing.Verbose() {
					t.Logf("missed %s: %q -> %q", r.ID, tp.Text, out)
				}
			}
		}
		for _, fp := range r.FPs {
			if fp.Text == "" {
				fpNoText++
				continue
			}
			out, counts := s.Redact(fp.Text)
			hit := out != fp.Text
			all++
			if hit {
				allHit++
			}
			switch {
			case slices.ContainsFunc(fp.Flagged, func(id string) bool { return id != "generic-api-key" }):
				family++
				if !hit {
					continue
				}
				familyHit++
				for label := range counts {
					if !slices.Contains(fp.Flagged, label) {
						t.Errorf("false positive %s, a key gitleaks reports as %v, redacted as %s: %q -> %q", r.ID, fp.Flagged, label, fp.Text, out)
					}
				}
				continue
			case len(fp.Flagged) == 0 && tpTexts[fp.Text]:
				same++
				if hit {
					sameHit++
					if testing.Verbose() {
						t.Logf("true positive of %s in another file type: %q -> %q", r.ID, fp.Text, out)
					}
				}
				continue
			}
			if len(fp.Flagged) == 0 {
				plain++
				if hit {
					plainHit++
				}
			} else if hit {
				genericHit++
			}
			if hit {
				fpByRule[r.ID]++
				if testing.Verbose() {
					t.Logf("false positive %s (gitleaks reports it: %v): %q -> %q %v", r.ID, fp.Flagged, fp.Text, out, counts)
				}
			}
		}
	}
	rate := func(n, of int) float64 { return float64(n) / float64(of) }
	recall := rate(tpHit, tps)
	allRate := rate(allHit, all)
	plainRate := rate(plainHit+sameHit, plain+same)
	restHit, rest := allHit-familyHit-sameHit, all-family-same
	restRate := rate(restHit, rest)
	t.Logf("gitleaks %s samples: %d of %d true positives redacted (recall %.2f%%); %d of them are samples of rules gitleaks applies to some file types only; %d true and %d false positives of a rule on file names have no text",
		samples.Gitleaks, tpHit, tps, 100*recall, tpPath, tpNoText, fpNoText)
	t.Logf("all false-positive samples: %d of %d redacted (%.2f%%)", allHit, all, 100*allRate)
	t.Logf("  of which another family's key that gitleaks reports under its own format rule: %d of %d redacted, each under that rule", familyHit, family)
	t.Logf("  of which the text of a true positive of the same rule, in a file type the rule is not for: %d of %d redacted", sameHit, same)
	t.Logf("  all but another family's keys: %d of %d redacted (%.2f%%)", allHit-familyHit, all-family, 100*rate(allHit-familyHit, all-family))
	t.Logf("  the rest: %d of %d redacted (%.2f%%), %d of them values that gitleaks' generic rule reports too", restHit, rest, 100*restRate, genericHit)
	t.Logf("false positives that gitleaks' default rules do not report: %d of %d redacted (%.2f%%)", plainHit+sameHit, plain+same, 100*plainRate)
	for id, n := range missByRule {
		t.Logf("  %s: %d true positives missed", id, n)
	}
	for id, n := range fpByRule {
		t.Logf("  %s: %d false positives redacted", id, n)
	}
	if recall < minRecall {
		t.Errorf("recall %.4f is below %.2f", recall, minRecall)
	}
	if plainRate > maxFPRedacted {
		t.Errorf("false-positive rate %.4f on the samples gitleaks does not report is above %.2f", plainRate, maxFPRedacted)
	}
	if restRate > maxFPRedacted {
		t.Errorf("false-positive rate %.4f on the samples that are no true positive elsewhere is above %.2f", restRate, maxFPRedacted)
	}
	if allRate > maxAllFPRedacted {
		t.Errorf("false-positive rate %.4f over all samples is above %.3f", allRate, maxAllFPRedacted)
	}
}

func TestGitleaksPatternFixes(t *testing.T) {
	for id, fix := range gitleaksPatternFixes {
		found := false
		for _, g := range gitleaksRules {
			if g.ID == id {
				found = strings.Contains(g.Regex, fix[0])
			}
		}
		if !found {
			t.Errorf("rule %s: %q is not in gitleaks' pattern any more", id, fix[0])
		}
	}
	for id := range gitleaksChecks {
		if !slices.ContainsFunc(gitleaksRules, func(g glRule) bool { return g.ID == id }) {
			t.Errorf("rule %s is not among gitleaks' rules any more", id)
		}
	}
}
