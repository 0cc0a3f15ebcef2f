package preflight

import (
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/state"
)

func TestUntouched(t *testing.T) {
	tests := []struct {
		name string
		rs   state.RunState
		want bool
	}{
		{"nothing recorded", state.RunState{}, true},
		{"done, guards passed", state.RunState{Iteration: 3, LastStatus: "done", LastGuard: state.GuardPass}, true},
		{"done, no guards", state.RunState{Iteration: 3, LastStatus: "done", LastGuard: state.GuardSkipped}, true},
		{"decomposed", state.RunState{Iteration: 3, LastStatus: "decomposed", LastGuard: state.GuardSkipped}, true},
		{"done, guards failed", state.RunState{Iteration: 3, LastStatus: "done", LastGuard: state.GuardFail}, false},
		{"retry", state.RunState{Iteration: 3, LastStatus: "retry", LastGuard: state.GuardSkipped}, false},
		{"blocked", state.RunState{Iteration: 3, LastStatus: "blocked", LastGuard: state.GuardSkipped}, false},
		{"executor error", state.RunState{Iteration: 3, LastStatus: "error", LastGuard: state.GuardSkipped}, false},
		{"interrupted", state.RunState{Iteration: 3, LastStatus: "interrupted", LastGuard: state.GuardSkipped}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := untouched(&tt.rs); got != tt.want {
				t.Errorf("untouched = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestGuardsDigest(t *testing.T) {
	base := []config.Guard{{Name: "test", Run: "go test ./...", Timeout: config.Duration{Duration: time.Minute}, OutputLimit: 1 << 20}}
	d := Digest(base)
	if d != Digest([]config.Guard{base[0]}) {
		t.Fatal("the digest of the same guards differs")
	}
	changed := map[string][]config.Guard{
		"name":         {{Name: "tests", Run: base[0].Run, Timeout: base[0].Timeout, OutputLimit: base[0].OutputLimit}},
		"run":          {{Name: "test", Run: "go test ./... ", Timeout: base[0].Timeout, OutputLimit: base[0].OutputLimit}},
		"timeout":      {{Name: "test", Run: base[0].Run, Timeout: config.Duration{Duration: time.Second}, OutputLimit: base[0].OutputLimit}},
		"output_limit": {{Name: "test", Run: base[0].Run, Timeout: base[0].Timeout}},
		"another":      append(append([]config.Guard{}, base...), config.Guard{Name: "vet", Run: "go vet ./..."}),
		"none":         nil,
		// Fields run together must not make the same digest.
		"split": {{Name: "test go", Run: "test ./...", Timeout: base[0].Timeout, OutputLimit: base[0].OutputLimit}},
	}
	for what, guards := range changed {
		if Digest(guards) == d {
			t.Errorf("changing the %s keeps the digest", what)
		}
	}
}
