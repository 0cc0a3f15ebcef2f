package room

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/engine"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/state"
)

// OpeningWritable returns a directory the room would make writable that
// holds the checkout at root, or its git directory: with it the walls
// are open, and the run, `runner plan` and `runner doctor` say so. ""
// when there is none.
func OpeningWritable(cfg *config.Config, root string) string {
	guarded := []string{root}
	if common, ok := state.GitCommonDir(root); ok {
		guarded = append(guarded, common)
	}
	for _, d := range Writable(cfg) {
		for _, g := range guarded {
			if rel, err := filepath.Rel(d, g); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				return d
			}
		}
	}
	return ""
}

// Opened says why a room for the checkout at root would leave it open: a
// directory it would make writable holds the checkout or its git
// directory (named from the repository). "" when there is none.
func Opened(cfg *config.Config, root string) string {
	d := OpeningWritable(cfg, root)
	if d == "" {
		return ""
	}
	if rel, err := filepath.Rel(root, d); err == nil {
		d = rel
	}
	return fmt.Sprintf("a writable directory, %s from the repository, holds it, its .git and .runner/ (narrow sandbox.writable or %s)", d, WritableEnv)
}

// For is the room of a program working in work with its temporary
// directory tmp under cfg: those two first, then its tools' directories,
// [sandbox] writable and RUNNER_SANDBOX_WRITABLE; built in the namespaces
// the machine gives (proc.RoomLayers), with sandbox.max_processes. nil
// where the program runs unconfined: sandbox.mode = "off", or "auto" on
// a kernel without Landlock. With "required", every layer is asked for:
// where the kernel lacks one, the room cannot be built and nothing
// starts. A worker (SPEC §22) confines its iterations, and git.setup,
// by the same rule. Every room hides the engine key this machine names
// (RUNNER_ENGINE_KEY_FILE, or cfg's engine.key_file) besides what the
// process hides (sandbox.Hidden), whether or not this process read it.
func For(cfg *config.Config, work, tmp string) *sandbox.Room {
	if cfg.Sandbox.Mode == config.SandboxOff {
		return nil
	}
	layers := proc.RoomLayers(cfg.Sandbox.MaxProcesses)
	required := cfg.Sandbox.Mode == config.SandboxRequired
	if layers.Landlock < 1 && !required {
		return nil
	}
	room := sandbox.ToolRoom(work, tmp, WritableExtra(cfg), ChainEnvs(cfg))
	room.Namespaces, room.MaxProcesses = layers.Namespaces, cfg.Sandbox.MaxProcesses
	if key, err := engine.KeyPath(cfg.Engine.KeyFile); err == nil && key != "" && !slices.Contains(room.Hidden, key) {
		room.Hidden = append(room.Hidden, key)
	}
	if required && room.Namespaces == "" {
		room.Namespaces = sandbox.NamespacesUser
	}
	return room
}

// Writable are the directories a room of cfg may write besides its
// worktree and temporary directory (its tools' caches, [sandbox]
// writable, RUNNER_SANDBOX_WRITABLE), whether or not this machine builds
// rooms: where no secret of the runner's may lie.
func Writable(cfg *config.Config) []string {
	return sandbox.ToolRoom("", "", WritableExtra(cfg), ChainEnvs(cfg)).Writable[2:]
}

// WritableExtra are the directories [sandbox] writable and
// RUNNER_SANDBOX_WRITABLE add to a room.
func WritableExtra(cfg *config.Config) []string {
	return append(slices.Clone(cfg.Sandbox.Writable), filepath.SplitList(os.Getenv(WritableEnv))...)
}

// ChainEnvs are the environments the run's executors give their
// programs.
func ChainEnvs(cfg *config.Config) []map[string]string {
	var envs []map[string]string
	for _, e := range cfg.Chain() {
		envs = append(envs, e.Env)
	}
	return envs
}
