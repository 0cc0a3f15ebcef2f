// Package state owns the runner's persistent files under .runner/: the
// run state with its in-flight marker, the append-only journal, the
// per-iteration run folders and their meta.json, the notes files the agent
// reports into, and the lock that keeps one runner per repository.
package state

import (
	"fmt"
	"path/filepath"
)

// DirName is the name of the runner's folder in a repository.
const DirName = ".runner"

// Paths names every file and folder of one repository's .runner/.
type Paths struct {
	Root string // repository root (the agent's working directory)
	Dir  string // Root/.runner
}

// NewPaths returns the paths for the repository at root.
func NewPaths(root string) Paths {
	return Paths{Root: root, Dir: filepath.Join(root, DirName)}
}

func (p Paths) join(elem ...string) string {
	return filepath.Join(append([]string{p.Dir}, elem...)...)
}

// Config is .runner/config.toml.
func (p Paths) Config() string { return p.join("config.toml") }

// Tree is .runner/tree.json.
func (p Paths) Tree() string { return p.join("tree.json") }

// ContextDir is the ephemeral .runner/context/.
func (p Paths) ContextDir() string { return p.join("context") }

// StateDir is .runner/state/.
func (p Paths) StateDir() string { return p.join("state") }

// Answers is .runner/state/answers.json: the answers people gave to the
// tasks' questions (`runner answer`).
func (p Paths) Answers() string { return p.join("state", "answers.json") }

// RunState is .runner/state/run_state.json.
func (p Paths) RunState() string { return p.join("state", "run_state.json") }

// Journal is .runner/state/journal.jsonl.
func (p Paths) Journal() string { return p.join("state", "journal.jsonl") }

// OldJournal is where the journal's older records go when it is rotated
// (loop.keep_runs): state/journal.1.jsonl.
func (p Paths) OldJournal() string { return p.join("state", "journal.1.jsonl") }

// Assumptions is .runner/state/assumptions.md.
func (p Paths) Assumptions() string { return p.join("state", "assumptions.md") }

// Questions is .runner/state/questions.md.
func (p Paths) Questions() string { return p.join("state", "questions.md") }

// Schema is .runner/state/output.schema.json.
func (p Paths) Schema() string { return p.join("state", "output.schema.json") }

// ReviewSchema is the JSON Schema of a reviewer's verdict (SPEC §17).
func (p Paths) ReviewSchema() string { return p.join("state", "review.schema.json") }

// StopRequest is the file `runner stop` creates to ask a running runner
// to finish its current iteration and exit.
func (p Paths) StopRequest() string { return p.join("state", "stop") }

// PauseRequest is the file `runner pause` creates to hold the runner
// after its current iteration, and `runner resume` removes. Unlike a stop
// request it outlives the runner: a runner started while it exists holds
// before its first iteration.
func (p Paths) PauseRequest() string { return p.join("state", "pause") }

// PreflightDir is .runner/state/preflight/: the guard.log and failure.log
// of the last preflight, the guards' run before the first agent of a run.
func (p Paths) PreflightDir() string { return p.join("state", "preflight") }

// RunsDir is .runner/runs/.
func (p Paths) RunsDir() string { return p.join("runs") }

// RunDir is .runner/runs/NNNNNN/ for iteration n.
func (p Paths) RunDir(n int) string { return p.join("runs", RunName(n)) }

// Lock is .runner/lock.
func (p Paths) Lock() string { return p.join("lock") }

// RunName is the zero-padded folder name of iteration n.
func RunName(n int) string { return fmt.Sprintf("%06d", n) }

// Rel returns path relative to the repository root, for messages.
func (p Paths) Rel(path string) string {
	if r, err := filepath.Rel(p.Root, path); err == nil {
		return r
	}
	return path
}
