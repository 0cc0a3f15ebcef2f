package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runner-cli/runner/internal/sandbox"
)

// ClaudeShellVar names the shell Claude Code runs its Bash tool's
// commands with (a path that names bash or zsh).
const ClaudeShellVar = "CLAUDE_CODE_SHELL"

// The commands a confined CLI runs for its model go through the tool
// shell (sandbox.MakeToolShell): they work in a Landlock domain nested in
// the CLI's, where they cannot reach its descriptors (its standard
// output, the runner's stream). Claude Code takes it from
// CLAUDE_CODE_SHELL; codex from its user's login shell, which the room's
// /etc/passwd names where the room has namespaces (Room.ToolShell).

// tookShell reports whether a run of preset in room gives its CLI the
// tool shell: claude's confined, codex's confined in namespaces.
func tookShell(preset string, room *sandbox.Room) bool {
	switch {
	case room == nil:
		return false
	case preset == PresetClaude:
		return true
	case preset == PresetCodex:
		return room.Namespaces != ""
	}
	return false
}

// toolShell makes the tool shell of a run in room out of the room's
// reach: in the system's temporary directory, or else in the run's
// directory runDir, and returns its path and what removes it.
func toolShell(room sandbox.Room, runDir string) (string, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("the tool shell: the runner's binary: %w", err)
	}
	var errs []error
	for _, parent := range []string{os.TempDir(), runDir} {
		path, remove, err := sandbox.MakeToolShell(parent, exe)
		if err == nil && sandbox.ToolShellReachable(room, path) {
			remove()
			err = fmt.Errorf("the tool shell: %s is writable in the agent's room (sandbox.writable), which could replace it", parent)
		}
		if err == nil {
			return path, remove, nil
		}
		errs = append(errs, err)
	}
	return "", nil, errors.Join(errs...)
}

// withToolShell gives the CLI of o and r the tool shell at path: claude
// in its environment (a CLAUDE_CODE_SHELL of executor.env gives way),
// codex in its room.
func withToolShell(o Options, r Request, path string) (Options, Request) {
	switch o.Preset {
	case PresetClaude:
		o.Env = maps.Clone(o.Env)
		delete(o.Env, ClaudeShellVar)
		r.Env = append(slices.Clip(r.Env), ClaudeShellVar+"="+path)
	case PresetCodex:
		room := *r.Confine
		room.ToolShell = path
		r.Confine = &room
	}
	return o, r
}

// claudeSettings returns claude's command line argv with the tool shell
// at path in the env of its --settings, the settings that outrank the
// project's: a .claude/settings.json or settings.local.json the agent
// writes in its worktree sets CLAUDE_CODE_SHELL for Claude Code over its
// environment, and would take the tool shell away from the next run.
// The person's --settings (JSON, or a file, relative to root) keep
// everything else; the option is given once, last.
func claudeSettings(argv []string, path, root string) ([]string, error) {
	settings := map[string]any{}
	var out []string
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		val, ok := strings.CutPrefix(a, "--settings=")
		if !ok && a == "--settings" && i+1 < len(argv) {
			val, ok = argv[i+1], true
			i++
		}
		if !ok {
			out = append(out, a)
			continue
		}
		data := []byte(val)
		if !strings.HasPrefix(strings.TrimSpace(val), "{") {
			file := val
			if !filepath.IsAbs(file) {
				file = filepath.Join(root, file)
			}
			var err error
			if data, err = os.ReadFile(file); err != nil {
				return nil, fmt.Errorf("executor.args: --settings: %w", err)
			}
		}
		settings = map[string]any{}
		if err := json.Unmarshal(data, &settings); err != nil {
			return nil, fmt.Errorf("executor.args: --settings %s: not a JSON object: %w", val, err)
		}
	}
	env, _ := settings["env"].(map[string]any)
	if env == nil {
		env = map[string]any{}
	}
	env[ClaudeShellVar] = path
	settings["env"] = env
	data, err := json.Marshal(settings)
	if err != nil {
		return nil, err
	}
	return append(out, "--settings", string(data)), nil
}

// prepareCLI gives the CLI of a run its own state directory (agentHome,
// returned as homeDir, "" for none) and, confined, the tool shell; done
// removes both. Its errors are *StartError.
func prepareCLI(o Options, r Request, argv []string) (_ Options, _ Request, _ []string, homeDir string, done func(), err error) {
	base := r.OutputDir
	if base == "" {
		base = os.TempDir()
	}
	homeVar, homeDir, removeHome, err := agentHome(o.Preset, o.Env, base)
	if err != nil {
		return o, r, argv, "", nil, &StartError{Err: err}
	}
	if homeVar != "" {
		name, _, _ := strings.Cut(homeVar, "=")
		o.Env = maps.Clone(o.Env)
		delete(o.Env, name)
		r.Env = append(slices.Clip(r.Env), homeVar)
	}
	if !tookShell(o.Preset, r.Confine) {
		return o, r, argv, homeDir, removeHome, nil
	}
	shell, removeShell, err := toolShell(*withHome(r.Confine, homeDir), r.RunDir)
	if err != nil {
		removeHome()
		return o, r, argv, "", nil, &StartError{Err: err}
	}
	done = func() { removeShell(); removeHome() }
	o, r = withToolShell(o, r, shell)
	if o.Preset == PresetClaude {
		if argv, err = claudeSettings(argv, shell, r.Root); err != nil {
			done()
			return o, r, argv, "", nil, &StartError{Err: err}
		}
	}
	return o, r, argv, homeDir, done, nil
}
