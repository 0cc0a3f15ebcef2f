package review

import (
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/prompt"
)

type fakeRedactor struct{}

func (fakeRedactor) Redact(s string) (string, map[string]int) {
	n := strings.Count(s, "ghp_secret")
	return strings.ReplaceAll(s, "ghp_secret", "[REDACTED:github-pat]"), map[string]int{"github-pat": n}
}

func input(changes string, budget int) Input {
	return Input{
		Path: "calc/ops", ID: "ops", Title: "Operations", Goal: "Add, subtract, multiply, divide.",
		Acceptance: []string{"go test ./... passes", "1/0 is an error"},
		Summary:    "Implemented the four operations; token ghp_secret used for nothing.",
		Guards:     []string{"test: pass, exit 0, 1.2s"},
		Changes:    changes, ChangesNote: "git diff abc123 (the last checkpoint) to the work:",
		Budget: budget, Redactor: fakeRedactor{},
	}
}

func TestBuild(t *testing.T) {
	diff := "diff --git a/ops.go b/ops.go\n+func Div(a, b int) int { return a / b }\n+```\n"
	p, err := Build(input(diff, 40960))
	if err != nil {
		t.Fatal(err)
	}
	order := []string{"# Review Contract", "# Task", "path: calc/ops", "- 1/0 is an error", "# Agent's Summary", "[REDACTED:github-pat]",
		"# Guard Results", "- test: pass, exit 0, 1.2s", "# Changes", "````text\ngit diff abc123", "+func Div", "# Output Contract"}
	at := 0
	for _, want := range order {
		i := strings.Index(p.Text[at:], want)
		if i < 0 {
			t.Fatalf("%q missing (or out of order) in:\n%s", want, p.Text)
		}
		at += i
	}
	if strings.Contains(p.Text, "ghp_secret") || p.Redactions["github-pat"] != 1 {
		t.Errorf("not scrubbed: redactions %v", p.Redactions)
	}
	if len(p.Sections) != 6 || p.Total != len(p.Text) {
		t.Errorf("sections %+v, total %d", p.Sections, p.Total)
	}
}

// TestBuildWithinBudget: over budget the changes are cut first, then the
// sections before them; the result is always within the budget.
func TestBuildWithinBudget(t *testing.T) {
	big := strings.Repeat("+ a line of the diff with ümlauts\n", 3000)
	for _, budget := range []int{MinBudget(), MinBudget() + 1, MinBudget() + 300, 4096, 20000} {
		p, err := Build(input(big, budget))
		if err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		if p.Total > budget {
			t.Fatalf("budget %d: %d bytes", budget, p.Total)
		}
		if !strings.HasSuffix(p.Text, "it names.\n") || !strings.HasPrefix(p.Text, "# Review Contract") {
			t.Fatalf("budget %d: a fixed section was cut", budget)
		}
		changes := p.Sections[4]
		if changes.State != prompt.StateTruncated {
			t.Errorf("budget %d: changes %s, want truncated", budget, changes.State)
		}
		if budget == 20000 && p.Sections[1].State != prompt.StateIncluded {
			t.Errorf("budget %d: the task was cut before the changes were", budget)
		}
	}
	if _, err := Build(input("", MinBudget()-1)); err == nil || !strings.Contains(err.Error(), "raise prompt.budget") {
		t.Errorf("budget below the minimum: %v", err)
	}
}

func TestBuildWithoutGuardsOrChanges(t *testing.T) {
	in := input("", 40960)
	in.Guards, in.ChangesNote = nil, ""
	p, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Text, "No guard commands are configured") || strings.Contains(p.Text, "# Changes") || p.Sections[4].State != prompt.StateEmpty {
		t.Errorf("prompt:\n%s", p.Text)
	}
}
