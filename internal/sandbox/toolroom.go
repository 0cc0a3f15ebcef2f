package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ToolRoom is the room of a program working in work with its temporary
// directory tmp: those two first, then the directories the agents' CLIs
// and build tools keep their state and caches in, then extra (absolute,
// or starting with "~/"). envs are the environments the programs get
// on top of this process's: a cache directory they name is writable too.
func ToolRoom(work, tmp string, extra []string, envs []map[string]string) *Room {
	room := &Room{Writable: []string{work, tmp}, ScopeSignals: true}
	home, _ := os.UserHomeDir()
	if st, err := os.Stat(home); err != nil || !st.IsDir() {
		home = "" // nothing is made in a home that is not there
	}
	// made are directories a confined tool cannot create for itself, and
	// fails without: they are made here first. The others are skipped
	// when missing.
	var dirs, made []string
	if home != "" {
		// The presets' CLIs keep their sessions and logs here, and build
		// tools their caches: a guard must build and test.
		made = append(made, "~/.cache", "~/.codex", "~/.claude")
		dirs = append(dirs, "~/.config/claude", "~/.npm", "~/.cargo/registry", "~/go/pkg/mod")
		room.WritableFiles = append(room.WritableFiles, filepath.Join(home, ".claude.json"))
	}
	// Where this process's environment or a program's puts them.
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "XDG_CACHE_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR"} {
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
	for _, d := range made {
		if d = expand(d); d != "" && os.MkdirAll(d, 0o700) == nil {
			room.Writable = append(room.Writable, d)
		}
	}
	for _, d := range dirs {
		if d = expand(d); d != "" {
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				room.Writable = append(room.Writable, d)
			}
		}
	}
	room.WritableFiles = slices.DeleteFunc(room.WritableFiles, func(f string) bool {
		_, err := os.Stat(f)
		return err != nil
	})
	return room
}
