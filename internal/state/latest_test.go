package state

import (
	"os"
	"testing"
)

func TestLatestRun(t *testing.T) {
	tests := []struct {
		name    string
		folders []int
		state   string // run_state.json; "" for none
		want    int
	}{
		{"nothing yet", nil, "", 0},
		{"no state: listed", []int{1, 2, 9}, "", 9},
		{"the state's last iteration", []int{1, 2, 3}, `{"version": 1, "iteration": 3}`, 3},
		{"a folder above the state's", []int{1, 2, 3, 4}, `{"version": 1, "iteration": 3}`, 4},
		{"the iteration in flight", []int{1, 2, 3}, `{"version": 1, "iteration": 2, "in_flight": {"iteration": 3, "node": "a", "phase": "started"}}`, 3},
		{"the state's folder is gone: listed", []int{1, 2, 7}, `{"version": 1, "iteration": 5}`, 7},
		{"a state that does not load: listed", []int{4, 6}, `{"version": 1, "iteration": `, 6},
		{"pruned below the last", []int{48, 49, 50}, `{"version": 1, "iteration": 50}`, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPaths(t.TempDir())
			if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
				t.Fatal(err)
			}
			for _, n := range tt.folders {
				if err := os.MkdirAll(p.RunDir(n), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if tt.state != "" {
				if err := os.WriteFile(p.RunState(), []byte(tt.state), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := LatestRun(p)
			if err != nil || got != tt.want {
				t.Errorf("LatestRun = %d, %v; want %d", got, err, tt.want)
			}
			if last, err := LastRun(p); err != nil || last != got {
				t.Errorf("LastRun = %d, %v; LatestRun %d", last, err, got)
			}
		})
	}
}
