package sandbox

import (
	"slices"
	"sync"
)

// Paths no room may read (SPEC §22): the engine's key file, which signs
// everything a coordinator and its workers exchange. Landlock grants
// reading everywhere, so a room of Landlock alone reads them; a room in
// namespaces covers each in its mount namespace (Room.Hidden). The
// process that holds such a secret names it here at its start, before
// any room is made; ToolRoom puts Hidden() in every room, and
// Layers.HidesPaths says whether the rooms a machine gives hide them.

var hidden struct {
	sync.Mutex
	paths []string
}

// Hide adds paths (absolute) to those every room of this process must
// hide.
func Hide(paths ...string) {
	hidden.Lock()
	defer hidden.Unlock()
	for _, p := range paths {
		if p != "" && !slices.Contains(hidden.paths, p) {
			hidden.paths = append(hidden.paths, p)
		}
	}
}

// Hidden are the paths every room of this process must hide.
func Hidden() []string {
	hidden.Lock()
	defer hidden.Unlock()
	return slices.Clone(hidden.paths)
}

// HidesPaths reports whether the rooms built with l hide their Hidden
// paths from what runs in them (a mount namespace of their own covers
// each); when they do not, why. Whether anything runs in a room at all
// (sandbox.mode, a program run in the checkout) is the caller's to say.
func (l Layers) HidesPaths() (bool, string) {
	switch {
	case l.Landlock < 1 && l.NoLandlock != "":
		return false, "there are no rooms on this machine (" + l.NoLandlock + "): what runs reads every file, this one included"
	case l.Landlock < 1:
		return false, "there are no rooms: what runs reads every file, this one included"
	case l.Namespaces == "":
		return false, "the rooms have no mount namespace of their own (" + l.NoNamespaces + "): Landlock lets them read every file, this one included"
	}
	return true, ""
}
