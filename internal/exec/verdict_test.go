package executor

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

func TestParseVerdict(t *testing.T) {
	tests := []struct {
		in   string
		want *Verdict
		err  string
	}{
		{`{"verdict": "approve", "reasons": []}`, &Verdict{Verdict: "approve"}, ""},
		{`{"verdict": "approve", "reasons": null}`, &Verdict{Verdict: "approve"}, ""},
		{`{"verdict": "approve"}`, &Verdict{Verdict: "approve"}, ""},
		{`{"verdict": "reject", "reasons": ["  1/0 panics ", ""]}`, &Verdict{Verdict: "reject", Reasons: []string{"1/0 panics"}}, ""},
		{`{"verdict": "reject", "reasons": [" "]}`, nil, "needs at least one reason"},
		{`{"verdict": "maybe", "reasons": []}`, nil, `"maybe" is not approve or reject`},
		{`{"reasons": []}`, nil, `"verdict" is missing`},
		{`{"verdict": "approve", "status": "done"}`, nil, "unknown"},
		{`{"verdict": "approve", "verdict": "reject", "reasons": ["x"]}`, nil, "duplicate"},
		{`["approve"]`, nil, "not a JSON object"},
		{` `, nil, "empty"},
	}
	for _, tt := range tests {
		got, err := ParseVerdict([]byte(tt.in))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseVerdict(%s) = %+v, %v; want error %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseVerdict(%s) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

// TestRunReview: a review run finds its verdict where a task run finds
// its message (the output file, a Claude result text, stdout), and a
// §5 message is no verdict.
func TestRunReview(t *testing.T) {
	tests := []struct {
		name, script string
		class        string
		want         *Verdict
		msgErr       string
	}{
		{"output file", `{"default": {"message": {"verdict": "reject", "reasons": ["no tests for /"]}}}`,
			ClassOK, &Verdict{Verdict: "reject", Reasons: []string{"no tests for /"}}, ""},
		{"stdout", `{"default": {"message": {"verdict": "approve", "reasons": []}, "deliver": "stdout"}}`,
			ClassOK, &Verdict{Verdict: "approve"}, ""},
		{"claude result text", `{"default": {"message": {"verdict": "approve", "reasons": ["fine"]}, "deliver": "claude"}}`,
			ClassOK, &Verdict{Verdict: "approve", Reasons: []string{"fine"}}, ""},
		{"a task message is no verdict", `{"default": {"message": {"status": "done", "summary": "ok"}}}`,
			ClassAgentError, nil, "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, r := setup(t, tt.script)
			o.Review = true
			res := runBounded(t, context.Background(), o, r)
			if res.Class != tt.class || !reflect.DeepEqual(res.Verdict, tt.want) || res.Message != nil {
				t.Fatalf("class %s, verdict %+v, message %+v (%s); want %s, %+v", res.Class, res.Verdict, res.Message, res.MessageError, tt.class, tt.want)
			}
			if !strings.Contains(res.MessageError, tt.msgErr) {
				t.Fatalf("message error %q, want it to say %q", res.MessageError, tt.msgErr)
			}
		})
	}
}
