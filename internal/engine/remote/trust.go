package remote

import (
	"fmt"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/engine"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/room"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/state"
)

// The coordinator trusts its workers only (SPEC §22): it signs every
// input with the engine key and refuses an output it cannot verify. The
// key is read once at the start, from a file no agent's room may write
// nor, where the rooms can, read; the run says when it is not protected.

// engineKey reads the engine key this machine names (RUNNER_ENGINE_KEY_FILE,
// else engine.key_file); nil when neither does. A key file inside the
// repository, or where a room may write, is refused; the rooms are told
// to hide it.
func (e *Engine) engineKey() (engine.Key, error) {
	cfg := e.env.Config()
	return engine.ReadKey(cfg.Engine.KeyFile, e.env.Paths.Root, room.Writable(cfg))
}

// engineUnprotected says why an agent could submit iterations to the
// workers or answer for one ("": nothing known lets it).
func (e *Engine) engineUnprotected() string {
	return unprotected(e.key, e.env.Config().Sandbox.Mode, e.env.Rooms.Why(), e.env.Rooms.Layers())
}

// unprotected is engineUnprotected of a coordinator with key whose
// [sandbox] mode is mode, whose agents run unconfined for the reason
// unconfined ("": they are confined), in rooms of layers.
func unprotected(key engine.Key, mode, unconfined string, layers sandbox.Layers) string {
	var open []string
	switch {
	case key == nil:
		open = append(open, fmt.Sprintf("no engine key (engine.key_file, or %s): any program that reaches the Temporal service, an agent among them, can submit iterations to the workers and answer for them", engine.KeyEnv))
	case mode == config.SandboxOff || unconfined != "":
		open = append(open, "the agents, guards and reviewer that run on this machine are not confined, and can read the engine key")
	default:
		if ok, why := layers.HidesPaths(); !ok {
			open = append(open, "the agents' rooms cannot hide the engine key: "+why)
		}
	}
	return strings.Join(open, "; ")
}

// NoteProtection says at the start of a run with [engine] whether the
// engine is protected, and keeps what it said in state/engine.json for
// `runner status` and the report.
func (e *Engine) NoteProtection() error {
	why := e.engineUnprotected()
	if why != "" {
		fmt.Fprintf(e.notices, "runner: the engine is NOT PROTECTED: %s (docs/distributed.md, \"Trust\")\n", inert.Line(why))
	}
	s := state.Engine{Run: e.run, Unprotected: why}
	if have, err := state.LoadEngine(e.env.Paths); err == nil && have == s {
		return nil
	}
	return state.SaveEngine(e.env.Paths, s)
}
