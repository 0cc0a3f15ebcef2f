package executor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentHome: the codex and claude presets' CLIs get a state directory
// of the run's, seeded from the person's credentials and settings (in
// their home folder, or where CODEX_HOME / CLAUDE_CONFIG_DIR point), and
// removed after the run: what the agent writes there (a notify program,
// a hook) never reaches the person's files.
func TestAgentHome(t *testing.T) {
	cases := []struct {
		preset, dir, file, global string
		env                       bool // the person's directory is named by the executor's environment
	}{
		{PresetCodex, ".codex", "config.toml", "", false},
		{PresetCodex, "my-codex", "config.toml", "", true},
		{PresetClaude, ".claude", "settings.json", ".claude.json", false},
		{PresetClaude, "my-claude", "settings.json", ".claude.json", true},
	}
	for _, c := range cases {
		t.Run(c.preset+"/"+c.dir, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("CODEX_HOME", "")
			t.Setenv("CLAUDE_CONFIG_DIR", "")
			person := filepath.Join(home, c.dir)
			if err := os.Mkdir(person, 0o700); err != nil {
				t.Fatal(err)
			}
			files := map[string]string{filepath.Join(person, c.file): "the person's settings\n"}
			if c.preset == PresetCodex {
				files[filepath.Join(person, "auth.json")] = `{"token":"t"}` + "\n"
			} else {
				files[filepath.Join(person, ".credentials.json")] = `{"token":"t"}` + "\n"
			}
			if c.global != "" {
				at := home
				if c.env {
					at = person
				}
				files[filepath.Join(at, c.global)] = "{\"theme\":\"dark\"}\n"
			}
			for p, data := range files {
				if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			o, r := setup(t, "{}")
			out := t.TempDir()
			script := filepath.Join(out, "cli.sh")
			if err := os.WriteFile(script, []byte(`#!/bin/sh
d="${CODEX_HOME:-$CLAUDE_CONFIG_DIR}"
echo "$d" > "$OUT/home"
cat "$d/`+c.file+`" > "$OUT/seen"
ls -A "$d" > "$OUT/ls"
echo 'notify = ["/tmp/evil"]' >> "$d/`+c.file+`"
echo '{"status":"done","summary":"x"}' > "$RUNNER_OUTPUT_FILE"
`), 0o755); err != nil {
				t.Fatal(err)
			}
			o.Preset, o.Bin, o.Command = c.preset, script, nil
			o.Env = map[string]string{"OUT": out}
			if c.env {
				o.Env[homeSeeds[c.preset].env] = person
			}
			if _, err := Run(context.Background(), o, r); err != nil {
				t.Fatal(err)
			}
			for p, want := range files {
				if got, err := os.ReadFile(p); err != nil || string(got) != want {
					t.Errorf("the person's %s = %q, %v; want it unchanged", p, got, err)
				}
			}
			used, _ := os.ReadFile(filepath.Join(out, "home"))
			dir := strings.TrimSpace(string(used))
			if dir == "" || strings.HasPrefix(dir, home) {
				t.Fatalf("the CLI's state directory is %q", dir)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the run's state directory %s is left: %v", dir, err)
			}
			if seen, _ := os.ReadFile(filepath.Join(out, "seen")); string(seen) != "the person's settings\n" {
				t.Errorf("the CLI saw %q, not the person's settings", seen)
			}
			ls, _ := os.ReadFile(filepath.Join(out, "ls"))
			for p := range files {
				if name := filepath.Base(p); !strings.Contains(string(ls), name+"\n") {
					t.Errorf("%s was not seeded: %q", name, ls)
				}
			}
		})
	}
}
