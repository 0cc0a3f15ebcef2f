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

// TestBacktraceIsNoEvidence: a backtrace frame names no error of its own,
// even when it reads "<unknown>"; the line that reports the error does.
func TestBacktraceIsNoEvidence(t *testing.T) {
	for line, want := range map[string]bool{
		"  13: <unknown>": false,
		"    at main (/x.js:1:2) failed": false,
		"Error: failed to initialize in-process app-server client: Permission denied (os error 13)": true,
	} {
		if got := errorLine.MatchString(line) && !backtraceFrame.MatchString(line); got != want {
			t.Errorf("%q as evidence: %v; want %v", line, got, want)
		}
	}
}
