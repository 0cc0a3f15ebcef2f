package sandbox

import (
	"slices"
	"testing"
)

// The paths a process names are the ones its rooms must hide, each once;
// until the rooms have a mount namespace of their own, they say they
// cannot.
func TestHidden(t *testing.T) {
	before := Hidden()
	Hide("/etc/runner/engine.key", "", "/etc/runner/engine.key")
	got := Hidden()
	if len(got) != len(before)+1 || !slices.Contains(got, "/etc/runner/engine.key") {
		t.Errorf("Hidden() = %v after hiding one path", got)
	}
	if ok, why := HidesPaths(); ok || why == "" {
		t.Errorf("HidesPaths() = %v, %q; rooms of Landlock alone hide nothing", ok, why)
	}
}
