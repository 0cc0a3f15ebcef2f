//go:build unix

package proc

import (
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/sandbox"
)

// TestRoomLayersWithout: RUNNER_SANDBOX_WITHOUT leaves the namespaces and
// the process limit out, as a machine without them would, and says so;
// sandbox.max_processes = 0 is the configuration's choice.
func TestRoomLayersWithout(t *testing.T) {
	if abi, _ := landlockABI(); abi < 1 {
		t.Skip("no Landlock here")
	}
	t.Setenv(WithoutEnv, "namespaces,process-limit")
	l := RoomLayers(100)
	if l.Namespaces != "" || !strings.Contains(l.NoNamespaces, WithoutEnv) || l.ProcessLimit != "" || !strings.Contains(l.NoProcessLimit, WithoutEnv) || l.ByConfig {
		t.Errorf("without both: %+v", l)
	}
	if !l.Missing() || len(l.Openings()) < 3 {
		t.Errorf("without both, Missing %v, openings %q", l.Missing(), l.Openings())
	}
	t.Setenv(WithoutEnv, "")
	l = RoomLayers(0)
	if l.ProcessLimit != "" || !l.ByConfig || l.NoProcessLimit != "sandbox.max_processes = 0" {
		t.Errorf("max_processes = 0: %+v", l)
	}
	if err := sandbox.ProbeNamespaces(sandbox.NamespacesUser); err == nil && l.Namespaces != sandbox.NamespacesUser {
		t.Errorf("a machine with user namespaces: %+v", l)
	}
}
