package state

import (
	"encoding/json"
	"errors"
	"os"

	"github.com/runner-cli/runner/internal/fsutil"
)

// Engine is state/engine.json, kept with [engine] (SPEC §22): the run's
// id, which names its Temporal workflows, and whether the engine is
// protected.
type Engine struct {
	Run string `json:"run"`
	// Unprotected says why an agent could submit iterations to the
	// workers, or answer for one, in the run under way or the last one
	// ("": the engine key signs everything, and no room can read it).
	Unprotected string `json:"unprotected,omitempty"`
}

// EngineFile is state/engine.json.
func (p Paths) EngineFile() string { return p.join("state", "engine.json") }

// LoadEngine reads state/engine.json; the zero Engine when there is none
// (or it cannot be read: a new run then starts).
func LoadEngine(p Paths) (Engine, error) {
	var e Engine
	data, err := fsutil.ReadLimited(p.EngineFile(), 64<<10, false)
	if errors.Is(err, os.ErrNotExist) {
		return e, nil
	}
	if err != nil {
		return e, err
	}
	return e, json.Unmarshal(data, &e)
}

// SaveEngine writes state/engine.json durably.
func SaveEngine(p Paths, e Engine) error {
	return fsutil.ReplaceJSON(p.EngineFile(), e, fsutil.Durable)
}
