package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestToolRoomLeavesToolConfigs: the room of a program has its worktree,
// its temporary directory and the build tools' caches, and keeps the
// worktree's .git read-only; the person's Claude and Codex configuration
// is never in it, even where sandbox.writable names a folder that holds
// it, or one inside it.
func TestToolRoomLeavesToolConfigs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	codexHome := filepath.Join(t.TempDir(), "codex")
	t.Setenv("CODEX_HOME", codexHome)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("GOCACHE", "")
	t.Setenv("GOMODCACHE", "")
	for _, d := range []string{".claude", ".codex", ".npm", "data"} {
		os.MkdirAll(filepath.Join(home, d), 0o755)
	}
	work, tmp := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(work, ".git"), []byte("gitdir: x\n"), 0o644)
	claudeDir := filepath.Join(t.TempDir(), "claude")
	extra := []string{"~/data", home, "~/.claude/projects", codexHome, filepath.Dir(codexHome)}
	envs := []map[string]string{{"CLAUDE_CONFIG_DIR": claudeDir}}
	room := ToolRoom(work, tmp, extra, envs)

	want := []string{work, tmp, filepath.Join(home, ".cache"), filepath.Join(home, "data"), filepath.Join(home, ".npm")}
	if !slices.Equal(room.Writable, want) {
		t.Errorf("Writable = %q, want %q", room.Writable, want)
	}
	if len(room.WritableFiles) != 0 {
		t.Errorf("WritableFiles = %q", room.WritableFiles)
	}
	if want := []string{filepath.Join(work, ".git")}; !slices.Equal(room.ReadOnly, want) {
		t.Errorf("ReadOnly = %q, want %q", room.ReadOnly, want)
	}
	left := strings.Join(LeftOut(extra, envs), "\n")
	for _, d := range []string{home + " (it holds " + filepath.Join(home, ".claude") + ")", filepath.Join(home, ".claude/projects"), codexHome, filepath.Dir(codexHome)} {
		if !strings.Contains(left, d) {
			t.Errorf("LeftOut does not name %s:\n%s", d, left)
		}
	}
	if strings.Contains(left, filepath.Join(home, "data")) {
		t.Errorf("LeftOut names ~/data:\n%s", left)
	}
	files := ToolConfigFiles(envs)
	for _, f := range []string{filepath.Join(home, ".codex/config.toml"), filepath.Join(home, ".claude/settings.json"), filepath.Join(codexHome, "AGENTS.md"), filepath.Join(claudeDir, "CLAUDE.md")} {
		if !slices.Contains(files, f) {
			t.Errorf("ToolConfigFiles lacks %s: %q", f, files)
		}
	}
}
