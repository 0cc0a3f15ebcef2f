package fakeagent

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestParseCLI(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		values  map[string][]string
		pos     []string
		wantErr string
	}{
		{"codex preset line", []string{"--json", "-o", "/o", "--output-schema=/s", "--sandbox", "workspace-write", "-"},
			map[string][]string{"--json": {""}, "-o": {"/o"}, "--output-schema": {"/s"}, "--sandbox": {"workspace-write"}}, []string{"-"}, ""},
		{"list option takes what follows", []string{"-p", "--allowedTools", "Bash", "Edit", "--verbose"},
			map[string][]string{"-p": {""}, "--allowedTools": {"Bash", "Edit"}, "--verbose": {""}}, nil, ""},
		{"unknown option", []string{"--json", "--frobnicate"}, nil, nil, "unexpected argument '--frobnicate' found"},
		{"missing value", []string{"-m"}, nil, nil, "a value is required for '-m'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := parseCLI(tt.args, merge(codexValueFlags, claudeValueFlags), claudeListFlags, merge(codexBoolFlags, claudeBoolFlags))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a.values, tt.values) || !reflect.DeepEqual(a.pos, tt.pos) {
				t.Errorf("parsed %v %v, want %v %v", a.values, a.pos, tt.values, tt.pos)
			}
		})
	}
}

func merge(a, b map[string]bool) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func TestResetText(t *testing.T) {
	got := (&Step{ResetIn: "2h"}).resetText("try again at {reset_at}.", "3:04 PM")
	if strings.Contains(got, "{reset_at}") || !regexp.MustCompile(`^try again at \d{1,2}:\d\d [AP]M\.$`).MatchString(got) {
		t.Errorf("resetText = %q, want the time in codex's format", got)
	}
	if got := (&Step{}).resetText("at {reset_at}", "3:04 PM"); got != "at {reset_at}" {
		t.Errorf("without reset_in: %q", got)
	}
}
