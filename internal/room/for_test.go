package room

import (
	"slices"
	"testing"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/engine"
	"github.com/runner-cli/runner/internal/sandbox"
)

// Every room hides the engine key this machine names, whether or not
// this process read it (`runner plan`'s, git.setup's, a worker's rooms).
func TestRoomForHidesTheKey(t *testing.T) {
	if abi, err := sandbox.ABI(); abi < 1 {
		t.Skipf("no Landlock here: %v", err)
	}
	t.Setenv(engine.KeyEnv, "/etc/runner/engine.key")
	cfg := &config.Config{}
	cfg.Sandbox.Mode = config.SandboxAuto
	room := For(cfg, t.TempDir(), t.TempDir())
	if room == nil || !slices.Contains(room.Hidden, "/etc/runner/engine.key") {
		t.Fatalf("the room %+v does not hide the key RUNNER_ENGINE_KEY_FILE names", room)
	}
	t.Setenv(engine.KeyEnv, "")
	cfg.Engine.KeyFile = "/srv/runner/engine.key"
	if room := For(cfg, t.TempDir(), t.TempDir()); !slices.Contains(room.Hidden, "/srv/runner/engine.key") {
		t.Errorf("the room %+v does not hide engine.key_file", room)
	}
}
