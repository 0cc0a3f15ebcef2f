package runbranch

import (
	"slices"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/git"
)

// Each kind of kept ref is bounded on its own, by count (the newest
// kept) and by age; the engine's exchange, the runner's marks and the
// refs of iterations under way are never pruned; zero bounds nothing.
func TestPastKeep(t *testing.T) {
	now := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	ago := func(h int) time.Time { return now.Add(-time.Duration(h) * time.Hour) }
	refs := []git.Ref{
		{Name: "refs/runner/attempts/1", Time: ago(50)},
		{Name: "refs/runner/attempts/2", Time: ago(3)},
		{Name: "refs/runner/attempts/3", Time: ago(2)},
		{Name: "refs/runner/attempts/4", Time: ago(1)},
		{Name: "refs/runner/attempts/10", Time: ago(1)},
		{Name: "refs/runner/kept/guards-2", Time: ago(2)},
		{Name: "refs/runner/kept/guards-9", Time: ago(100)},
		{Name: "refs/runner/foreign/9-1700000000", Time: ago(100)},
		{Name: "refs/runner/engine/run/9.0/result", Time: ago(1000)},
		{Name: "refs/runner/following", Time: ago(1000)},
	}
	names := func(rs []git.Ref) []string {
		var n []string
		for _, r := range rs {
			n = append(n, r.Name)
		}
		slices.Sort(n)
		return n
	}
	tests := []struct {
		name string
		keep config.KeepRefs
		busy []int
		want []string
	}{
		{"by count, the higher iteration newer within a second", config.KeepRefs{Count: 2}, nil,
			[]string{"refs/runner/attempts/1", "refs/runner/attempts/2", "refs/runner/attempts/3"}},
		{"by age", config.KeepRefs{Age: config.Duration{Duration: 48 * time.Hour}}, nil,
			[]string{"refs/runner/attempts/1", "refs/runner/foreign/9-1700000000", "refs/runner/kept/guards-9"}},
		{"both", config.KeepRefs{Count: 3, Age: config.Duration{Duration: 48 * time.Hour}}, nil,
			[]string{"refs/runner/attempts/1", "refs/runner/attempts/2", "refs/runner/foreign/9-1700000000", "refs/runner/kept/guards-9"}},
		{"busy iterations kept", config.KeepRefs{Count: 1, Age: config.Duration{Duration: time.Hour}}, []int{9, 2, 10},
			[]string{"refs/runner/attempts/1", "refs/runner/attempts/3"}},
		{"no bound", config.KeepRefs{}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(pastKeep(refs, tc.keep, now, tc.busy)); !slices.Equal(got, tc.want) {
				t.Errorf("pruned %q, want %q", got, tc.want)
			}
		})
	}
}
