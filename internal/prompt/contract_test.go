package prompt

import (
	"fmt"
	"strings"
	"testing"
)

func TestContractNamesProtectedGlobs(t *testing.T) {
	base := runnerContract(nil, "")
	if strings.Contains(base, "paths matching") {
		t.Errorf("a contract without verify.protect speaks of globs:\n%s", base)
	}
	tests := []struct {
		name    string
		protect []string
		want    string // on the protected-paths line
	}{
		{"one", []string{"tests/**"}, "`.runner/state/`, and the paths matching `tests/**`. Changing or deleting one fails the attempt"},
		{"several", []string{"tests/**", "Makefile", "**/*_test.go"}, ", and the paths matching `tests/**`, `Makefile`, `**/*_test.go`. "},
		{"quoted", []string{"a`b", "new\nline"}, "the paths matching \"a`b\", \"new\\nline\". "},
		{"many", manyGlobs(200, 20), " more (verify.protect in .runner/config.toml). Changing"},
		{"one too long", []string{strings.Repeat("x", 2000)}, ", and the paths matching verify.protect in .runner/config.toml (1 globs). "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := runnerContract(tt.protect, "")
			if !strings.Contains(c, tt.want) {
				t.Errorf("contract does not hold %q:\n%s", tt.want, c)
			}
			if extra := len(c) - len(base); extra > protectListMax {
				t.Errorf("the globs add %d bytes, more than %d", extra, protectListMax)
			}
			if got := strings.Count(c, "\n"); got != strings.Count(base, "\n") {
				t.Errorf("the globs changed the number of lines: %d, want %d", got, strings.Count(base, "\n"))
			}
		})
	}
	c := runnerContract(manyGlobs(200, 20), "")
	listed := strings.Count(c, "`pkg")
	if !strings.Contains(c, fmt.Sprintf(" and %d more (verify.protect in .runner/config.toml). ", 200-listed)) || listed < 10 {
		t.Errorf("%d of 200 globs listed, the rest not counted right:\n%s", listed, c)
	}
}

func TestBuildNamesProtectedGlobs(t *testing.T) {
	in := calcInput(t)
	in.Protect = []string{"tests/**", "Makefile"}
	pack, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(pack.Text, runnerContract(in.Protect, "")) || !strings.Contains(pack.Text, "`tests/**`, `Makefile`") {
		t.Errorf("the prompt does not start with the contract naming the globs:\n%s", pack.Text[:2000])
	}
	if MinBudget(in.Protect) != MinBudget(nil)+len(runnerContract(in.Protect, ""))-len(runnerContract(nil, "")) {
		t.Errorf("MinBudget does not count the globs: %d with, %d without", MinBudget(in.Protect), MinBudget(nil))
	}
	in.Budget = MinBudget(in.Protect) - 1
	if _, err := Build(in); err == nil {
		t.Error("a budget below MinBudget(protect) was accepted")
	}
}

// manyGlobs returns n globs of about size bytes each.
func manyGlobs(n, size int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("pkg%03d/%s", i, strings.Repeat("y", size-7))
	}
	return out
}
