package outcome

import (
	"strings"
	"testing"
)

func TestBlockedReason(t *testing.T) {
	for _, tt := range []struct {
		summary   string
		questions []string
		want      string
	}{
		{"I cannot go on: the spec and the tests disagree.", nil, "I cannot go on: the spec and the tests disagree."},
		{"summary", []string{"Which currency: EUR or USD?"}, "Which currency: EUR or USD?"},
		{"summary", []string{"Which currency?", "Round half up", "or to even?"}, "Which currency? Round half up; or to even?"},
		{"summary", []string{"", "  "}, "summary"},
		{"s", []string{"two\nlines?"}, "two lines?"},
	} {
		if got := BlockedReason(tt.summary, tt.questions); got != tt.want {
			t.Errorf("BlockedReason(%q, %q) = %q, want %q", tt.summary, tt.questions, got, tt.want)
		}
	}
	if got := BlockedReason("", []string{strings.Repeat("why? ", 300)}); len(got) > 510 {
		t.Errorf("a long question is %d bytes", len(got))
	}
}
