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

// Targets on gitleaks' own samples.
const (
	minRecall     = 0.95
	maxFPRedacted = 0.03
)

// TestGitleaksSamples runs every sample of gitleaks' rule definitions
// through the Scrubber. A true positive counts as redacted when none of the
// secrets gitleaks reports for it is left in the output; a false positive
// counts as redacted when anything in it is. False positives that
// gitleaks' own default rules report (under another rule: a key that is the
// wrong kind for one rule is the right kind for the next) are counted
// apart.
func TestGitleaksSamples(t *testing.T) {
	samples := loadGitleaksSamples(t)
	s := mustNew(t, Options{Enabled: true})
	var tps, tpHit, tpPath, tpNoText, fps, fpHit, fpFlagged, fpFlaggedHit, fpSameText, fpNoText int
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
			if len(fp.Flagged) > 0 {
				fpFlagged++
				if hit {
					fpFlaggedHit++
				}
				continue
			}
			fps++
			if hit {
				fpHit++
				fpByRule[r.ID]++
				if tpTexts[fp.Text] {
					fpSameText++ // a true positive in another file type
				}
				if testing.Verbose() {
					t.Logf("false positive %s: %q -> %q %v", r.ID, fp.Text, out, counts)
				}
			}
		}
	}
	recall := float64(tpHit) / float64(tps)
	fpRate := float64(fpHit) / float64(fps)
	t.Logf("gitleaks %s samples: %d of %d true positives redacted (recall %.2f%%); %d of them are samples of rules gitleaks applies to some file types only; %d true and %d false positives of a rule on file names have no text",
		samples.Gitleaks, tpHit, tps, 100*recall, tpPath, tpNoText, fpNoText)
	t.Logf("%d of %d false positives redacted (%.2f%%; %d of them are the text of a true positive of the same rule, in a file type the rule is not for); %d of the %d more that gitleaks' default rules report themselves",
		fpHit, fps, 100*fpRate, fpSameText, fpFlaggedHit, fpFlagged)
	t.Logf("all false-positive samples: %d of %d redacted (%.2f%%)", fpHit+fpFlaggedHit, fps+fpFlagged, 100*float64(fpHit+fpFlaggedHit)/float64(fps+fpFlagged))
	for id, n := range missByRule {
		t.Logf("  %s: %d true positives missed", id, n)
	}
	for id, n := range fpByRule {
		t.Logf("  %s: %d false positives redacted", id, n)
	}
	if recall < minRecall {
		t.Errorf("recall %.4f is below %.2f", recall, minRecall)
	}
	if fpRate > maxFPRedacted {
		t.Errorf("false-positive rate %.4f is above %.2f", fpRate, maxFPRedacted)
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
