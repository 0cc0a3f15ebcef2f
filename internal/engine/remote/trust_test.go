package remote

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/engine"
	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/state"
)

// The coordinator says the engine is protected only when it has a key
// and every room on this machine hides it: confined, in namespaces. The
// layers are those the run found (RUNNER_SANDBOX_WITHOUT included).
func TestEngineUnprotected(t *testing.T) {
	key := engine.Key("0123456789abcdef0123456789abcdef")
	sealed := sandbox.Layers{Landlock: 7, Namespaces: sandbox.NamespacesUser, ProcessLimit: "cgroup v2 pids.max"}
	landlockOnly := sandbox.Layers{Landlock: 7, NoNamespaces: "left out by " + "RUNNER_SANDBOX_WITHOUT"}
	for _, c := range []struct {
		name       string
		key        engine.Key
		mode       string
		layers     sandbox.Layers
		unconfined string
		want       string // "" : protected
	}{
		{"sealed rooms", key, config.SandboxAuto, sealed, "", ""},
		{"no key", nil, config.SandboxAuto, sealed, "", "no engine key"},
		{"rooms of Landlock alone", key, config.SandboxAuto, landlockOnly, "",
			"the agents' rooms cannot hide the engine key: the rooms have no mount namespace of their own (left out by RUNNER_SANDBOX_WITHOUT)"},
		{"sandbox off", key, config.SandboxOff, sandbox.Layers{}, `sandbox.mode = "off"`, "are not confined, and can read the engine key"},
		{"unconfined", key, config.SandboxAuto, sealed, "a writable directory holds the repository", "are not confined, and can read the engine key"},
	} {
		got := unprotected(c.key, c.mode, c.unconfined, c.layers)
		switch {
		case c.want == "" && got != "":
			t.Errorf("%s: unprotected: %s", c.name, got)
		case c.want != "" && !strings.Contains(got, c.want):
			t.Errorf("%s: %q, want it to say %q", c.name, got, c.want)
		}
	}
}

// The coordinator reads its key whatever its [sandbox]: with the sandbox
// off no room is built, and the key is still checked against where rooms
// would write.
func TestEngineKeyWithTheSandboxOff(t *testing.T) {
	key := filepath.Join(t.TempDir(), "engine.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("k", engine.MinKeyLen)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(engine.KeyEnv, "")
	cfg := &config.Config{}
	cfg.Sandbox.Mode, cfg.Engine.KeyFile = config.SandboxOff, key
	e := &Engine{env: &lane.Env{Paths: state.NewPaths(t.TempDir()), Config: func() *config.Config { return cfg }}}
	if got, err := e.engineKey(); err != nil || len(got) != engine.MinKeyLen {
		t.Errorf("engineKey() = %q, %v", got, err)
	}
	cfg.Sandbox.Writable = []string{filepath.Dir(key)}
	if _, err := e.engineKey(); err == nil || !strings.Contains(err.Error(), "which every agent's room may write") {
		t.Errorf("a key where rooms may write: %v", err)
	}
}
