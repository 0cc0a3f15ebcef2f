package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// parseArgs reads Confine's arguments: the room as JSON, "--", then the
// command. Unknown fields in the room are an error: a rule this binary
// does not know is not silently left out.
func parseArgs(args []string) (Room, []string, error) {
	var room Room
	if len(args) < 3 || args[1] != "--" {
		return room, nil, fmt.Errorf("usage: runner %s <room json> -- program [argument...]", ConfineArg)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(args[0])))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&room); err != nil {
		return room, nil, fmt.Errorf("bad room %q: %v", args[0], err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return room, nil, fmt.Errorf("bad room %q: more than one JSON value", args[0])
	}
	if err := room.Check(); err != nil {
		return room, nil, err
	}
	argv := args[2:]
	if argv[0] == "" {
		return room, nil, errors.New("no program given")
	}
	return room, argv, nil
}

// Check reports what makes the room unusable: a path that is not
// absolute, namespaces it does not know, a negative process limit.
func (r Room) Check() error {
	for _, list := range [][]string{r.Writable, r.WritableFiles} {
		for _, p := range list {
			if !filepath.IsAbs(p) {
				return fmt.Errorf("bad room: writable path %q is not absolute", p)
			}
		}
	}
	for _, p := range r.ReadOnly {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("bad room: read-only path %q is not absolute", p)
		}
	}
	if r.ToolShell != "" && (!filepath.IsAbs(r.ToolShell) || strings.ContainsAny(r.ToolShell, ":\n")) {
		return fmt.Errorf("bad room: tool shell %q is not an absolute path without a colon (a login shell in /etc/passwd)", r.ToolShell)
	}
	switch r.Namespaces {
	case "", NamespacesUser, NamespacesRoot:
	default:
		return fmt.Errorf("bad room: namespaces %q: want %q or %q", r.Namespaces, NamespacesUser, NamespacesRoot)
	}
	if r.MaxProcesses < 0 {
		return fmt.Errorf("bad room: max_processes %d is negative", r.MaxProcesses)
	}
	return nil
}
