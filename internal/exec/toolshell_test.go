package executor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/sandbox"
)

// TestClaudeSettings: the tool shell goes into claude's --settings,
// given once and last, keeping the person's settings from JSON or a
// file; a --settings that is not a JSON object is an error naming it.
func TestClaudeSettings(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "s.json"), []byte(`{"model": "opus", "env": {"A": "1", "CLAUDE_CODE_SHELL": "/bin/sh"}}`), 0o644)
	base := []string{"claude", "-p", "--allowedTools", "Bash"}
	want := `{"env":{"CLAUDE_CODE_SHELL":"/t/bash"}}`
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"none", nil, want},
		{"json", []string{"--settings", `{"model":"opus"}`}, `{"env":{"CLAUDE_CODE_SHELL":"/t/bash"},"model":"opus"}`},
		{"file", []string{"--settings=s.json"}, `{"env":{"A":"1","CLAUDE_CODE_SHELL":"/t/bash"},"model":"opus"}`},
	} {
		got, err := claudeSettings(slices.Concat(base, c.args), "/t/bash", root)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if w := append(slices.Clone(base), "--settings", c.want); !slices.Equal(got, w) {
			t.Errorf("%s: %q, want %q", c.name, got, w)
		}
	}
	for _, bad := range []string{"missing.json", "{not json"} {
		if _, err := claudeSettings([]string{"claude", "--settings", bad}, "/t/bash", root); err == nil || !strings.Contains(err.Error(), "--settings") {
			t.Errorf("--settings %s: %v", bad, err)
		}
	}
}

// TestToolShellOutOfReach: the tool shell is made in the temporary
// directory, or in the run's directory where the room writes the
// former; where the room writes both, the run does not start.
func TestToolShellOutOfReach(t *testing.T) {
	tmp, runDir := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, c := range []struct {
		writable []string
		parent   string
	}{{nil, tmp}, {[]string{tmp}, runDir}, {[]string{tmp, runDir}, ""}} {
		path, remove, err := toolShell(sandbox.Room{Writable: c.writable}, runDir)
		if c.parent == "" {
			if err == nil || !strings.Contains(err.Error(), "sandbox.writable") {
				t.Errorf("room writing %q: %q, %v", c.writable, path, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("room writing %q: %v", c.writable, err)
		}
		if filepath.Dir(filepath.Dir(path)) != c.parent {
			t.Errorf("room writing %q: tool shell %s, want it in %s", c.writable, path, c.parent)
		}
		remove()
	}
}
