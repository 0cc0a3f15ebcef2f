package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// ToolRoom is the room of a program working in work with its temporary
// directory tmp: those two first, then the directories build tools keep
// their caches in, then extra (absolute, or starting with "~/"). envs
// are the environments the programs get on top of this process's: a
// cache directory they name is writable too. The person's own tool
// configuration (~/.claude, ~/.claude.json, ~/.codex, where CODEX_HOME
// and CLAUDE_CONFIG_DIR point) is not in it: the agents' CLIs work from
// state directories of the run's (package executor). A .git in work (a
// linked worktree's file) stays read-only where the room has namespaces,
// and the paths this process hides (Hidden) are hidden there.
// A directory that holds that configuration, or is inside it, is left
// out even when extra names it.
func ToolRoom(work, tmp string, extra []string, envs []map[string]string) *Room {
	room := &Room{Writable: []string{work, tmp}, ScopeSignals: true, Hidden: Hidden()}
	if work != "" {
		if _, err := os.Lstat(filepath.Join(work, ".git")); err == nil {
			room.ReadOnly = append(room.ReadOnly, filepath.Join(work, ".git"))
		}
	}
	home, _ := os.UserHomeDir()
	if st, err := os.Stat(home); err != nil || !st.IsDir() {
		home = "" // nothing is made in a home that is not there
	}
	// made are directories a confined tool cannot create for itself, and
	// fails without: they are made here first. The others are skipped
	// when missing.
	var dirs, made []string
	if home != "" {
		// Build tools keep their caches here: a guard must build and
		// test.
		made = append(made, "~/.cache")
		dirs = append(dirs, "~/.npm", "~/.cargo/registry", "~/go/pkg/mod")
	}
	// Where this process's environment or a program's puts them.
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "XDG_CACHE_HOME"} {
		if d := os.Getenv(v); filepath.IsAbs(d) {
			made = append(made, d)
		}
		for _, e := range envs {
			if d := e[v]; filepath.IsAbs(d) {
				made = append(made, d)
			}
		}
	}
	made = append(made, extra...)
	expand := func(d string) string {
		if rest, ok := strings.CutPrefix(d, "~/"); ok {
			if home == "" {
				return ""
			}
			d = filepath.Join(home, rest)
		}
		if !filepath.IsAbs(d) {
			return ""
		}
		return filepath.Clean(d)
	}
	configs := ToolConfigs(envs)
	mine := func(d string) bool { return within(d, configs) || holdsAny(d, configs) }
	for _, d := range made {
		if d = expand(d); d != "" && !mine(d) && os.MkdirAll(d, 0o700) == nil {
			room.Writable = append(room.Writable, d)
		}
	}
	for _, d := range dirs {
		if d = expand(d); d != "" && !mine(d) {
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				room.Writable = append(room.Writable, d)
			}
		}
	}
	return room
}

// LeftOut are the directories of extra that ToolRoom leaves out because
// they hold the person's tool configuration (ToolConfigs) or are inside
// it, each with the configuration it holds.
func LeftOut(extra []string, envs []map[string]string) []string {
	home, _ := os.UserHomeDir()
	configs := ToolConfigs(envs)
	var out []string
	for _, d := range extra {
		if rest, ok := strings.CutPrefix(d, "~/"); ok && home != "" {
			d = filepath.Join(home, rest)
		}
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		for _, c := range configs {
			if within(d, []string{c}) || within(c, []string{d}) {
				out = append(out, d+" (it holds "+c+")")
				break
			}
		}
	}
	return out
}

// ToolConfigs are the person's configuration of the agents' CLIs, which
// no room may write: ~/.claude, ~/.claude.json, ~/.codex, and where
// CODEX_HOME and CLAUDE_CONFIG_DIR point in this process's environment
// or in envs.
func ToolConfigs(envs []map[string]string) []string {
	var out []string
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		out = append(out, filepath.Join(home, ".claude"), filepath.Join(home, ".claude.json"), filepath.Join(home, ".codex"))
	}
	for _, v := range []string{"CODEX_HOME", "CLAUDE_CONFIG_DIR"} {
		if d := os.Getenv(v); filepath.IsAbs(d) {
			out = append(out, filepath.Clean(d))
		}
		for _, e := range envs {
			if d := e[v]; filepath.IsAbs(d) {
				out = append(out, filepath.Clean(d))
			}
		}
	}
	return out
}

// ToolConfigFiles are the files of the person's tool configuration that
// steer the CLIs (hooks, notify programs, instructions) in the folders of
// ToolConfigs, for a runner that must check them after an agent that ran
// unconfined. Not the files the CLIs rewrite by themselves (credentials,
// ~/.claude.json).
func ToolConfigFiles(envs []map[string]string) []string {
	var out []string
	for _, d := range ToolConfigs(envs) {
		if filepath.Base(d) == ".claude.json" {
			continue
		}
		for _, f := range []string{"settings.json", "settings.local.json", "CLAUDE.md", "config.toml", "AGENTS.md", "AGENTS.override.md"} {
			out = append(out, filepath.Join(d, f))
		}
	}
	return out
}

// within reports whether p is one of dirs or below one.
func within(p string, dirs []string) bool {
	for _, d := range dirs {
		if rel, err := filepath.Rel(d, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// holdsAny reports whether one of paths is below d.
func holdsAny(d string, paths []string) bool {
	for _, p := range paths {
		if within(p, []string{d}) {
			return true
		}
	}
	return false
}
