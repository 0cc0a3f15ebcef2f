package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/sandbox"
)

// A worker's folder holds its repository (whose configuration its git
// reads), the notes of its iterations under way and its key's
// neighbours: an agent that could write there could make the worker's
// own git run its program, or forge what the worker sends back. So it
// lies outside every room's writable paths: its default is the user's
// state directory (rooms write the cache directory, not it), and a
// --dir that holds, or lies in, a directory a room may write is refused.

// DefaultDir is the worker's folder when --dir is not given:
// $XDG_STATE_HOME/runner/worker, or ~/.local/state/runner/worker.
func DefaultDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "runner", "worker"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no --dir given and no home directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "runner", "worker"), nil
}

// roomWritable are the paths room lets its programs write beyond its
// own worktree and temporary directory, which lie in the worker's folder.
func roomWritable(room *sandbox.Room) []string {
	var out []string
	if len(room.Writable) > 2 {
		out = append(out, room.Writable[2:]...)
	}
	return append(out, room.WritableFiles...)
}

// checkFolder refuses dir when it overlaps a path the room of a program
// of cfg may write (roomFor, as the iterations are confined).
func checkFolder(dir string, cfg *config.Config, roomFor func(cfg *config.Config, work, tmp string) *sandbox.Room) error {
	if roomFor == nil {
		return nil
	}
	if d := Overlap(dir, roomWritable(roomFor(cfg, "", ""))); d != "" {
		return &folderError{dir: dir, writable: d}
	}
	return nil
}

// folderError is a worker's folder that a room may write.
type folderError struct{ dir, writable string }

func (e *folderError) Error() string {
	how := "lies in"
	if Within(e.writable, e.dir) {
		how = "holds"
	}
	return fmt.Sprintf("the worker's folder %s %s %s, which the agents' rooms may write: an agent could change the worker's own repository and notes there; "+
		"give a --dir outside it (the default is ~/.local/state/runner/worker)", e.dir, how, e.writable)
}

// isFolderError reports whether err is a folder a room may write.
func isFolderError(err error) bool {
	var fe *folderError
	return errors.As(err, &fe)
}
