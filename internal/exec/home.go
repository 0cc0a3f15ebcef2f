package executor

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/sandbox"
)

// The codex and claude presets' CLIs keep their state (sessions, logs,
// caches, refreshed tokens) in a directory of their own: CODEX_HOME,
// CLAUDE_CONFIG_DIR. For each run the runner gives them a fresh one of
// the run's, seeded from the person's (their credentials and settings,
// as they are when the agent starts) and never copied back, so that
// nothing an agent or its CLI writes there reaches the person's next
// session with Claude Code or Codex, nor the next agent or reviewer of
// the run. The person's directories are never writable from a room
// (sandbox.ToolRoom).

// homeSeed is what a preset's state directory is seeded with: files
// copied from the person's (written by the CLI, as a token refresh is),
// and folders linked to theirs (only read: instructions, commands,
// skills).
type homeSeed struct {
	env    string   // the variable naming the directory
	dflt   string   // the person's directory when env is not set, below the home folder
	files  []string // copied
	linked []string // linked
	// globalFile, when not "", is a file the CLI keeps beside the
	// directory when env is not set (~/.claude.json), and inside it when
	// it is: copied there.
	globalFile string
}

var homeSeeds = map[string]homeSeed{
	PresetCodex: {
		env: "CODEX_HOME", dflt: ".codex",
		files:  []string{"auth.json", "config.toml", "AGENTS.md", "AGENTS.override.md"},
		linked: []string{"prompts", "rules", "skills"},
	},
	PresetClaude: {
		env: "CLAUDE_CONFIG_DIR", dflt: ".claude",
		files:      []string{".credentials.json", "settings.json", "CLAUDE.md"},
		linked:     []string{"agents", "commands", "skills", "output-styles"},
		globalFile: ".claude.json",
	},
}

// seedFileMax bounds a file copied into a state directory.
const seedFileMax = 64 << 20

// agentHome makes the state directory of a run of preset (none for
// preset "command"), in a fresh folder below base, seeded from the
// person's directory as env (the executor's environment) or the runner's
// environment names it. It returns the variable to set ("NAME=dir"), the
// directory, and what removes it.
func agentHome(preset string, env map[string]string, base string) (string, string, func(), error) {
	seed, ok := homeSeeds[preset]
	if !ok {
		return "", "", func() {}, nil
	}
	from, global := seed.source(env)
	parent, err := os.MkdirTemp(base, "runner-"+preset+"-home-")
	if err != nil {
		return "", "", nil, fmt.Errorf("the agent's state directory: %w", err)
	}
	remove := func() { fsutil.RemoveAll(parent) }
	dir := filepath.Join(parent, seed.dflt)
	if err := os.Mkdir(dir, 0o700); err != nil {
		remove()
		return "", "", nil, fmt.Errorf("the agent's state directory: %w", err)
	}
	for _, f := range seed.files {
		if err := copySeed(filepath.Join(from, f), filepath.Join(dir, f)); err != nil {
			remove()
			return "", "", nil, err
		}
	}
	if global != "" {
		if err := copySeed(global, filepath.Join(dir, seed.globalFile)); err != nil {
			remove()
			return "", "", nil, err
		}
	}
	for _, d := range seed.linked {
		if st, err := os.Stat(filepath.Join(from, d)); err == nil && st.IsDir() {
			os.Symlink(filepath.Join(from, d), filepath.Join(dir, d))
		}
	}
	return seed.env + "=" + dir, dir, remove, nil
}

// source is the person's state directory of the preset, and its global
// file ("" when the preset has none).
func (s homeSeed) source(env map[string]string) (dir, global string) {
	dir = env[s.env]
	if dir == "" {
		dir = os.Getenv(s.env)
	}
	if dir != "" {
		if s.globalFile != "" {
			global = filepath.Join(dir, s.globalFile)
		}
		return dir, global
	}
	home, _ := os.UserHomeDir()
	if s.globalFile != "" {
		global = filepath.Join(home, s.globalFile)
	}
	return filepath.Join(home, s.dflt), global
}

// copySeed copies the person's file from into to (a new file, mode
// kept); a missing from is no error.
func copySeed(from, to string) error {
	src, err := os.Open(from)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("seed the agent's state directory: %w", err)
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil // a folder or a device is no setting
	}
	if st.Size() > seedFileMax {
		return fmt.Errorf("seed the agent's state directory: %s is larger than %d MiB", from, seedFileMax>>20)
	}
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm()&0o700)
	if err != nil {
		return fmt.Errorf("seed the agent's state directory: %w", err)
	}
	_, err = io.Copy(dst, io.LimitReader(src, seedFileMax))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("seed the agent's state directory from %s: %w", from, err)
	}
	return nil
}

// withHome is r's room with the run's state directory dir writable too
// (nil: not confined).
func withHome(room *sandbox.Room, dir string) *sandbox.Room {
	if room == nil || dir == "" {
		return room
	}
	c := *room
	c.Writable = append(slices.Clip(c.Writable), dir)
	return &c
}
