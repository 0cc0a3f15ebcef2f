package loop

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/engine"
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
		r := &Runner{cfg: &config.Config{}, engine: &remote{key: c.key}, layers: c.layers, unconfined: c.unconfined}
		r.cfg.Sandbox.Mode = c.mode
		got := r.engineUnprotected()
		switch {
		case c.want == "" && got != "":
			t.Errorf("%s: unprotected: %s", c.name, got)
		case c.want != "" && !strings.Contains(got, c.want):
			t.Errorf("%s: %q, want it to say %q", c.name, got, c.want)
		}
	}
}

// Every room hides the engine key this machine names, whether or not
// this process read it (`runner plan`'s, git.setup's, a worker's rooms).
func TestRoomForHidesTheKey(t *testing.T) {
	if abi, err := sandbox.ABI(); abi < 1 {
		t.Skipf("no Landlock here: %v", err)
	}
	t.Setenv(engine.KeyEnv, "/etc/runner/engine.key")
	cfg := &config.Config{}
	cfg.Sandbox.Mode = config.SandboxAuto
	room := RoomFor(cfg, t.TempDir(), t.TempDir())
	if room == nil || !slices.Contains(room.Hidden, "/etc/runner/engine.key") {
		t.Fatalf("the room %+v does not hide the key RUNNER_ENGINE_KEY_FILE names", room)
	}
	t.Setenv(engine.KeyEnv, "")
	cfg.Engine.KeyFile = "/srv/runner/engine.key"
	if room := RoomFor(cfg, t.TempDir(), t.TempDir()); !slices.Contains(room.Hidden, "/srv/runner/engine.key") {
		t.Errorf("the room %+v does not hide engine.key_file", room)
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
	r := &Runner{cfg: cfg, p: state.NewPaths(t.TempDir())}
	if got, err := r.engineKey(); err != nil || len(got) != engine.MinKeyLen {
		t.Errorf("engineKey() = %q, %v", got, err)
	}
	cfg.Sandbox.Writable = []string{filepath.Dir(key)}
	if _, err := r.engineKey(); err == nil || !strings.Contains(err.Error(), "which every agent's room may write") {
		t.Errorf("a key where rooms may write: %v", err)
	}
}
