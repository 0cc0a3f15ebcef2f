// Package room decides the agent's room for a run (SPEC §19): whether
// the agents, guards, reviewers and git.setup of the run are confined,
// what a room in a given working tree may write, and the temporary
// directories the rooms are given.
//
// It owns those decisions and the temporary directories (outside the
// repository, named after it). The rooms themselves are package
// sandbox's, the layers the machine gives package proc's; it must not
// touch the repository, the runner's files or the ledger.
package room

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/sandbox"
)

// With [sandbox] mode "auto" or "required", the agent, the guards, the
// reviewer and git.setup run confined to their worktree, a temporary
// directory of their own and the caches their tools need (the presets'
// CLIs get state directories of the run's, package executor);
// everything else they may only read. Landlock keeps their writes in;
// where the kernel gives them, user, mount and PID namespaces keep
// chmod, the sockets and /proc of the machine out, and a cgroup or
// RLIMIT_NPROC their processes (package sandbox, layer by layer:
// proc.RoomLayers). What a missing layer leaves open is said at the
// run's start and in each iteration's meta.json. The repository's .git
// and the checkout's .runner/ are out of their reach, so what they could
// change there is no longer judged after the fact. Landlock grants whole
// directories: an agent working in the checkout itself would have .git
// and .runner/ within its writable tree, so only a worktree is confined.

// WritableEnv names more writable directories for this machine, separated
// by ':', added to [sandbox] writable (a machine's caches, without
// editing the committed config).
const WritableEnv = "RUNNER_SANDBOX_WRITABLE"

// ErrRequired ends a run whose [sandbox] mode is "required" where the
// agent cannot be confined.
var ErrRequired = errors.New("sandbox.mode = \"required\"")

// inCheckout is why an agent working in the checkout is not confined.
const inCheckout = "it works in the checkout itself, where .git and .runner/ would be within its reach (git.worktree = false, or no git checkpoints)"

// Policy is what a run decided of its rooms: the layers the machine
// gives, whether its programs are confined, and why not.
type Policy struct {
	root       string // the repository
	layers     sandbox.Layers
	confined   bool
	unconfined string
}

// NewPolicy is the policy of a run in the repository at root, nothing
// decided yet: nothing is confined.
func NewPolicy(root string) *Policy { return &Policy{root: root} }

// Probe finds, before anything runs (git.setup included), what the
// machine gives the agent's room (proc.RoomLayers); with mode
// "required", a layer it should give and does not is an error, and
// nothing starts.
func (p *Policy) Probe(cfg *config.Config) error {
	p.layers = sandbox.Layers{}
	if cfg.Sandbox.Mode == config.SandboxOff {
		return nil
	}
	p.layers = proc.RoomLayers(cfg.Sandbox.MaxProcesses)
	if cfg.Sandbox.Mode == config.SandboxRequired && p.layers.Landlock > 0 && p.layers.Missing() {
		return fmt.Errorf("%w: the agent's room would leave open: %s; `runner doctor` says what this machine gives",
			ErrRequired, strings.Join(p.layers.Openings(), "; "))
	}
	return nil
}

// Decide decides whether the run confines its programs, the run
// branch's working tree being mainDir, and says on notices at its start
// when the agent is not confined and why, or what its room leaves open;
// with mode "required" not being confined is an error, and no agent
// starts.
func (p *Policy) Decide(cfg *config.Config, mainDir string, notices io.Writer) error {
	p.confined = false
	mode := cfg.Sandbox.Mode
	if mode == config.SandboxOff {
		p.unconfined = "sandbox.mode = \"off\""
		fmt.Fprintln(notices, "runner: the agent is not confined (sandbox.mode = \"off\"): it can write anything this user can; its changes to the runner's files and .git are checked after each run")
		return nil
	}
	why := ""
	if p.layers.Landlock < 1 {
		why = p.layers.NoLandlock
	} else if cfg.Loop.Parallel <= 1 && !cfg.Engine.On() && mainDir == p.root {
		// With slots, each works in a worktree of its own, confined there.
		p.confined = true
		why = inCheckout
	} else {
		why = Opened(cfg, p.root)
	}
	if why == "" {
		p.confined, p.unconfined = true, ""
		if left := sandbox.LeftOut(WritableExtra(cfg), ChainEnvs(cfg)); len(left) > 0 {
			fmt.Fprintf(notices, "runner: left out of sandbox.writable, which no room may write for holding your agents' CLI configuration: %s\n", inert.Line(strings.Join(left, ", ")))
		}
		if open := p.layers.Openings(); len(open) > 0 {
			fmt.Fprintf(notices, "runner: the agent's room leaves open: %s (`runner doctor` lists every layer)\n", inert.Line(strings.Join(open, "; ")))
		}
		return nil
	}
	p.unconfined = why
	if mode == config.SandboxRequired {
		return fmt.Errorf("%w: the agent cannot be confined: %s; `runner doctor` says what this machine gives", ErrRequired, why)
	}
	fmt.Fprintf(notices, "runner: the agent is NOT confined: %s; its changes to the runner's files and .git are checked after each run (`runner doctor` says more)\n", inert.Line(why))
	return nil
}

// Why says why the run's programs are not confined ("" when the run can
// confine them).
func (p *Policy) Why() string { return p.unconfined }

// Layers are what the machine gives the rooms.
func (p *Policy) Layers() sandbox.Layers { return p.layers }

// Confined says whether programs working in work run confined: the run
// can confine, and work is a worktree of its own.
func (p *Policy) Confined(work string) bool {
	return p.confined && work != p.root
}

// Openings are what the room of a program working in work leaves open
// (none when it is not confined: Unconfined says so).
func (p *Policy) Openings(work string) []string {
	if !p.Confined(work) {
		return nil
	}
	return p.layers.Openings()
}

// Unconfined says why programs working in work are not confined, ""
// when they are.
func (p *Policy) Unconfined(work string) string {
	switch {
	case p.Confined(work):
		return ""
	case p.unconfined != "":
		return p.unconfined
	}
	return inCheckout
}
