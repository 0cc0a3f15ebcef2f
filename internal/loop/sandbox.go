package loop

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/engine"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/sandbox"
	"github.com/runner-cli/runner/internal/state"
)

// The agent's room (SPEC §19): with [sandbox] mode "auto" or "required",
// the agent, the guards, the reviewer and git.setup run confined to
// their worktree, a temporary directory of their own and the caches
// their tools need (the presets' CLIs get state directories of the
// run's, package executor); everything else they may only read. Landlock
// keeps their writes in; where the kernel gives them, user, mount and
// PID namespaces keep chmod, the sockets and /proc of the machine out,
// and a cgroup or RLIMIT_NPROC their processes (package sandbox, layer
// by layer: proc.RoomLayers). What a missing layer leaves open is said
// at the run's start and in each iteration's meta.json. The repository's
// .git and the checkout's .runner/ are out of their reach, so what they
// could change there is no longer judged after the fact (judges.go).
// Landlock grants whole directories: an agent working in the checkout
// itself would have .git and .runner/ within its writable tree, so only
// a worktree is confined.

// WritableEnv names more writable directories for this machine, separated
// by ':', added to [sandbox] writable (a machine's caches, without
// editing the committed config).
const WritableEnv = "RUNNER_SANDBOX_WRITABLE"

// errSandboxRequired ends a run whose [sandbox] mode is "required" where
// the agent cannot be confined.
var errSandboxRequired = errors.New("sandbox.mode = \"required\"")

// probeRoom finds, before anything runs (git.setup included), what the
// machine gives the agent's room (proc.RoomLayers); with mode
// "required", a layer it should give and does not is an error, and
// nothing starts.
func (r *Runner) probeRoom() error {
	r.layers = sandbox.Layers{}
	if r.cfg.Sandbox.Mode == config.SandboxOff {
		return nil
	}
	r.layers = proc.RoomLayers(r.cfg.Sandbox.MaxProcesses)
	if r.cfg.Sandbox.Mode == config.SandboxRequired && r.layers.Landlock > 0 && r.layers.Missing() {
		return fmt.Errorf("%w: the agent's room would leave open: %s; `runner doctor` says what this machine gives",
			errSandboxRequired, strings.Join(r.layers.Openings(), "; "))
	}
	return nil
}

// decideConfinement sets r.confined for the run, and says at its start
// when the agent is not confined and why, or what its room leaves open;
// with mode "required" not being confined is an error, and no agent
// starts.
func (r *Runner) decideConfinement() error {
	r.removeStaleTempDirs()
	r.confined = false
	mode := r.cfg.Sandbox.Mode
	if mode == config.SandboxOff {
		r.unconfined = "sandbox.mode = \"off\""
		fmt.Fprintln(r.opts.Notices, "runner: the agent is not confined (sandbox.mode = \"off\"): it can write anything this user can; its changes to the runner's files and .git are checked after each run")
		return nil
	}
	why := ""
	if r.layers.Landlock < 1 {
		why = r.layers.NoLandlock
	} else if r.cfg.Loop.Parallel <= 1 && !r.cfg.Engine.On() && r.mainDir == r.p.Root {
		// With slots, each works in a worktree of its own, confined there.
		r.confined = true
		why = inCheckout
	} else if d := r.openingWritable(); d != "" {
		// Named from the repository: it holds it.
		if rel, err := filepath.Rel(r.p.Root, d); err == nil {
			d = rel
		}
		why = fmt.Sprintf("a writable directory, %s from the repository, holds it, its .git and .runner/ (narrow sandbox.writable or %s)", d, WritableEnv)
	}
	if why == "" {
		r.confined, r.unconfined = true, ""
		if left := sandbox.LeftOut(r.writableExtra(), r.chainEnvs()); len(left) > 0 {
			fmt.Fprintf(r.opts.Notices, "runner: left out of sandbox.writable, which no room may write for holding your agents' CLI configuration: %s\n", inert.Line(strings.Join(left, ", ")))
		}
		if open := r.layers.Openings(); len(open) > 0 {
			fmt.Fprintf(r.opts.Notices, "runner: the agent's room leaves open: %s (`runner doctor` lists every layer)\n", inert.Line(strings.Join(open, "; ")))
		}
		return nil
	}
	r.unconfined = why
	if mode == config.SandboxRequired {
		return fmt.Errorf("%w: the agent cannot be confined: %s; `runner doctor` says what this machine gives", errSandboxRequired, why)
	}
	fmt.Fprintf(r.opts.Notices, "runner: the agent is NOT confined: %s; its changes to the runner's files and .git are checked after each run (`runner doctor` says more)\n", inert.Line(why))
	return nil
}

// inCheckout is why an agent working in the checkout is not confined.
const inCheckout = "it works in the checkout itself, where .git and .runner/ would be within its reach (git.worktree = false, or no git checkpoints)"

// isConfined says whether this lane's agent, guards and reviewer run
// confined: the run can confine, and the lane is a worktree of its own.
func (r *worker) isConfined() bool {
	return r.confined && r.workDir != r.p.Root
}

// openings are what this lane's room leaves open (none when it is not
// confined: unconfinedWhy says so).
func (r *worker) openings() []string {
	if !r.isConfined() {
		return nil
	}
	return r.layers.Openings()
}

// unconfinedWhy says why this lane's programs are not confined, "" when
// they are.
func (r *worker) unconfinedWhy() string {
	switch {
	case r.isConfined():
		return ""
	case r.unconfined != "":
		return r.unconfined
	}
	return inCheckout
}

// openingWritable returns a directory the room would make writable that
// holds the checkout, or its git directory: with it the walls are
// open. "" when there is none.
func (r *Runner) openingWritable() string {
	guarded := []string{r.p.Root}
	if common, ok := state.GitCommonDir(r.p.Root); ok {
		guarded = append(guarded, common)
	}
	for _, d := range RoomWritable(r.cfg) {
		for _, g := range guarded {
			if rel, err := filepath.Rel(d, g); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				return d
			}
		}
	}
	return ""
}

// room is what iteration n's agent, guards and reviewer may write in this
// worker's lane: its working tree, a temporary directory of its own
// (also their TMPDIR), their tools' state and caches, and [sandbox]
// writable. nil when the run is not confined.
func (r *worker) room(n int) (*sandbox.Room, string, error) {
	if !r.isConfined() {
		return nil, "", nil
	}
	tmp := r.tempDir(n)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, "", fmt.Errorf("the agent's temporary directory: %w", err)
	}
	return RoomFor(r.cfg, r.workDir, tmp), tmp, nil
}

// RoomFor is the room of a program working in work with its temporary
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
func RoomFor(cfg *config.Config, work, tmp string) *sandbox.Room {
	if cfg.Sandbox.Mode == config.SandboxOff {
		return nil
	}
	layers := proc.RoomLayers(cfg.Sandbox.MaxProcesses)
	required := cfg.Sandbox.Mode == config.SandboxRequired
	if layers.Landlock < 1 && !required {
		return nil
	}
	room := sandbox.ToolRoom(work, tmp, writableExtra(cfg), chainEnvs(cfg))
	room.Namespaces, room.MaxProcesses = layers.Namespaces, cfg.Sandbox.MaxProcesses
	if key, err := engine.KeyPath(cfg.Engine.KeyFile); err == nil && key != "" && !slices.Contains(room.Hidden, key) {
		room.Hidden = append(room.Hidden, key)
	}
	if required && room.Namespaces == "" {
		room.Namespaces = sandbox.NamespacesUser
	}
	return room
}

// RoomWritable are the directories a room of cfg may write besides its
// worktree and temporary directory (its tools' caches, [sandbox]
// writable, RUNNER_SANDBOX_WRITABLE), whether or not this machine builds
// rooms: where no secret of the runner's may lie.
func RoomWritable(cfg *config.Config) []string {
	return sandbox.ToolRoom("", "", writableExtra(cfg), chainEnvs(cfg)).Writable[2:]
}

// writableExtra are the directories [sandbox] writable and
// RUNNER_SANDBOX_WRITABLE add to a room.
func writableExtra(cfg *config.Config) []string {
	return append(slices.Clone(cfg.Sandbox.Writable), filepath.SplitList(os.Getenv(WritableEnv))...)
}

// chainEnvs are the environments the run's executors give their
// programs.
func chainEnvs(cfg *config.Config) []map[string]string {
	var envs []map[string]string
	for _, e := range cfg.Chain() {
		envs = append(envs, e.Env)
	}
	return envs
}

func (r *Runner) writableExtra() []string        { return writableExtra(r.cfg) }
func (r *Runner) chainEnvs() []map[string]string { return chainEnvs(r.cfg) }

// setupRoom is the room git.setup runs in, in the worktree at work of
// slot (0: the run's own): the room of an agent working there, with a
// temporary directory of its own; nil where agents run unconfined. done
// removes the directory.
func (r *Runner) setupRoom(work string, slot int) (room *sandbox.Room, done func()) {
	if len(r.cfg.Git.Setup) == 0 {
		return nil, func() {}
	}
	sum := sha256.Sum256([]byte(r.p.Root))
	tmp := filepath.Join(os.TempDir(), fmt.Sprintf("runner-%s-setup-%d", hex.EncodeToString(sum[:6]), slot))
	done = func() { fsutil.RemoveAll(tmp) }
	if room = RoomFor(r.cfg, work, tmp); room == nil {
		return nil, func() {}
	}
	// Without it the setup cannot write a temporary file, which its own
	// error says.
	os.MkdirAll(tmp, 0o700)
	return room, done
}

// tempDir is iteration n's temporary directory, outside the repository:
// named after the repository, so that two runners never share one.
func (r *Runner) tempDir(n int) string {
	sum := sha256.Sum256([]byte(r.p.Root))
	return filepath.Join(os.TempDir(), fmt.Sprintf("runner-%s-%d", hex.EncodeToString(sum[:6]), n))
}

// removeStaleTempDirs removes, at the start of a run, the temporary
// directories of this repository's iterations that are not in flight:
// those of iterations set aside, or whose runner was killed and whose
// record a later runner made.
func (r *Runner) removeStaleTempDirs() {
	inFlight := map[int]bool{}
	for _, f := range r.ledger.State().Flights() {
		inFlight[f.Iteration] = true
	}
	prefix := strings.TrimSuffix(r.tempDir(0), "0")
	matches, _ := filepath.Glob(prefix + "*")
	for _, m := range matches {
		rest := strings.TrimPrefix(m, prefix)
		// A git.setup's (setupRoom), left by a runner that was killed.
		_, setup := strings.CutPrefix(rest, "setup-")
		if n, err := strconv.Atoi(rest); setup || err == nil && !inFlight[n] {
			fsutil.RemoveAll(m)
		}
	}
}

// removeTempDir removes iteration n's temporary directory once it is
// recorded.
func (r *Runner) removeTempDir(n int) {
	fsutil.RemoveAll(r.tempDir(n))
}
