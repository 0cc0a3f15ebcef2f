package sandbox

import (
	"slices"
	"strings"
	"testing"
)

// The paths a process names are the ones its rooms must hide, each once,
// and every tool room carries them; only rooms with a mount namespace of
// their own hide them.
func TestHidden(t *testing.T) {
	before := Hidden()
	Hide("/etc/runner/engine.key", "", "/etc/runner/engine.key")
	got := Hidden()
	if len(got) != len(before)+1 || !slices.Contains(got, "/etc/runner/engine.key") {
		t.Errorf("Hidden() = %v after hiding one path", got)
	}
	if room := ToolRoom("/work", "/tmp/work", nil, nil); !slices.Contains(room.Hidden, "/etc/runner/engine.key") {
		t.Errorf("a tool room hides %v, not the process's hidden paths", room.Hidden)
	}
	for _, c := range []struct {
		name   string
		layers Layers
		hides  bool
		why    string
	}{
		{"no Landlock", Layers{NoLandlock: "the kernel has no Landlock"}, false, "there are no rooms on this machine (the kernel has no Landlock)"},
		{"Landlock alone", Layers{Landlock: 7, NoNamespaces: "left out by RUNNER_SANDBOX_WITHOUT"}, false,
			"the rooms have no mount namespace of their own (left out by RUNNER_SANDBOX_WITHOUT)"},
		{"user namespaces", Layers{Landlock: 7, Namespaces: NamespacesUser}, true, ""},
		{"root's namespaces", Layers{Landlock: 3, Namespaces: NamespacesRoot}, true, ""},
	} {
		hides, why := c.layers.HidesPaths()
		if hides != c.hides || !strings.HasPrefix(why, c.why) || !hides && why == "" {
			t.Errorf("%s: HidesPaths() = %v, %q; want %v, %q", c.name, hides, why, c.hides, c.why)
		}
	}
}
