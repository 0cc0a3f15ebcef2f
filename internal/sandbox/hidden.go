package sandbox

import (
	"slices"
	"sync"
)

// Paths no room may read (SPEC §22): the engine's key file, which signs
// everything a coordinator and its workers exchange. Landlock grants
// reading everywhere, so a room of Landlock alone reads them; a sealed
// room's mount namespace hides each (a file or a folder of its own
// mounted over it). The process that holds such a secret names it here
// at its start, before any room is made; the confinement helper hides
// Hidden() where it can, and HidesPaths says whether it does.

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

// HidesPaths reports whether the rooms this process makes hide Hidden()
// from what runs in them; when they do not, why. The rooms are Landlock
// alone: they hide nothing.
func HidesPaths() (bool, string) {
	return false, "they have no mount namespace of their own: they read every file, this one included"
}
