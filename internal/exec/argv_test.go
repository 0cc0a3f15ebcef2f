package executor

import (
	"slices"
	"testing"
)

// TestCodexInRoom: confined by the runner, codex's own sandbox (which
// needs namespaces Landlock refuses) gives way to danger-full-access, in
// every spelling; other arguments stay.
func TestCodexInRoom(t *testing.T) {
	for _, tt := range []struct{ in, want []string }{
		{[]string{"--sandbox", "workspace-write", "-m", "o3"}, []string{"--sandbox", "danger-full-access", "-m", "o3"}},
		{[]string{"-s", "read-only"}, []string{"-s", "danger-full-access"}},
		{[]string{"--sandbox=workspace-write"}, []string{"--sandbox=danger-full-access"}},
		{[]string{"-c", "x=1"}, []string{"-c", "x=1"}},
	} {
		if got := CodexInRoom(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("CodexInRoom(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
	argv, err := BuildArgv(Options{Preset: PresetCodex, Args: []string{"--sandbox", "workspace-write"}, Confined: true}, Placeholders{})
	if err != nil || !slices.Contains(argv, "danger-full-access") || slices.Contains(argv, "workspace-write") {
		t.Errorf("confined codex argv %q", argv)
	}
	argv, _ = BuildArgv(Options{Preset: PresetCodex, Args: []string{"--sandbox", "workspace-write"}}, Placeholders{})
	if !slices.Contains(argv, "workspace-write") {
		t.Errorf("unconfined codex argv %q lost its own sandbox", argv)
	}
}
