// Package doctor is `runner doctor`: what this machine gives the runner
// (Landlock, cgroup v2, git, the agent CLIs), every layer of the agent's
// room and what it closes, and what the configuration would do with it
// (SPEC §19). Gathering changes nothing of the person's: the probes read
// the kernel and /proc, run `--version` of the programs found (each
// bounded in time, stdin closed) and two read-only `git rev-parse`; the
// cgroup probes make empty child cgroups and remove them at once, and
// the room probe builds a room around the runner's own binary, which
// stops at once, as the runner itself does when a run starts. Every probe
// is a field of Probes, so tests inject what they need.
package doctor

import (
	"context"
	"os/exec"
	"runtime"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/sandbox"
)

// DefaultTimeout bounds every command a probe runs.
const DefaultTimeout = 5 * time.Second

// Git versions the runner needs, as internal/git checks them.
var (
	MinGit         = git.MinVersion
	MinGitParallel = git.MinVersionParallel
)

// Report is everything `runner doctor` says, also its --json form.
type Report struct {
	Landlock Landlock `json:"landlock"`
	Cgroup   Cgroup   `json:"cgroup"`
	// Room is every layer of the agent's room: what it closes, what
	// gives it here or why it is missing.
	Room []sandbox.Layer `json:"room,omitempty"`
	Git  Git             `json:"git"`
	// Agents are the agent CLIs: codex and claude, then every other
	// program the configuration names.
	Agents []Tool `json:"agents"`
	CPUs   int    `json:"cpus"`
	Config Config `json:"config"`
	// Answers say whether each configured agent answered a trivial
	// prompt (AskExecutors); absent when not asked.
	Answers []Answer `json:"answers,omitempty"`
}

// Cgroup says whether the runner can put each command it starts in a
// cgroup v2 of its own (stopped at once with cgroup.kill).
type Cgroup struct {
	OK bool `json:"ok"`
	// Dir is the cgroup under which the commands' cgroups would be made.
	Dir string `json:"dir,omitempty"`
	// Note says why not (OK false).
	Note string `json:"note,omitempty"`
}

// Tool is a program found (or not) and what its --version says.
type Tool struct {
	// Name labels the line: "codex", "claude", "git", or the program a
	// configuration names.
	Name string `json:"name"`
	// Bin is what was looked up: a name in PATH or a path.
	Bin   string `json:"bin"`
	Found bool   `json:"found"`
	Path  string `json:"path,omitempty"`
	// Version is the first line the program printed for --version.
	Version string `json:"version,omitempty"`
	// Error says what went wrong: "not found", "timed out after 5s",
	// "exit status 1: ...".
	Error string `json:"error,omitempty"`
	// Note says more: why the version was not asked.
	Note string `json:"note,omitempty"`
	// UsedBy are the config tables that run it ("executor",
	// "fallback 1", "review").
	UsedBy []string `json:"used_by,omitempty"`
}

// Git is the git program found and its version.
type Git struct {
	Tool
	// Major and Minor are its version; 0 when unknown.
	Major int `json:"major,omitempty"`
	Minor int `json:"minor,omitempty"`
	// OK: found, and at least MinGit.
	OK bool `json:"ok"`
	// Needs is the version the runner needs ("2.25").
	Needs string `json:"needs"`
}

// AtLeast reports whether the git found is at least version v.
func (g Git) AtLeast(v [2]int) bool {
	return g.Major > v[0] || g.Major == v[0] && g.Minor >= v[1]
}

// Input is what the command line found: the repository, its config.
type Input struct {
	// Root is the folder holding .runner/; "" when none was found.
	Root string
	// NoDir says why there is no .runner/ (Root "").
	NoDir string
	// File names the config file for display.
	File string
	// Config is the loaded configuration; nil when it could not be read.
	Config *config.Config
	// Err is why the config could not be read.
	Err error
}

// Probes find out what the machine gives; DefaultProbes are the real
// ones, tests replace them.
type Probes struct {
	// Landlock returns the Landlock ABI version the kernel supports and
	// the errata it fixed, or the errno of landlock_create_ruleset.
	Landlock func() (abi, errata int, err error)
	// Cgroup says whether commands can get cgroups of their own.
	Cgroup func() Cgroup
	// Room says what the machine gives a room whose processes are
	// bounded by maxProcesses (proc.RoomLayers); nil: not asked.
	Room func(maxProcesses int) sandbox.Layers
	// LookPath finds a program (exec.LookPath).
	LookPath func(string) (string, error)
	// Repo says whether root is in a git working tree with a commit.
	Repo func(ctx context.Context, git, root string, timeout time.Duration) RepoState
	// NumCPU is the number of CPUs (runtime.NumCPU).
	NumCPU func() int
	// Engine asks the Temporal service of [engine] and git about the
	// remote (probeEngine).
	Engine func(ctx context.Context, e config.Engine, root string, timeout time.Duration) *Engine
	// Timeout bounds each command run (DefaultTimeout when zero).
	Timeout time.Duration
}

// DefaultProbes look at this machine.
func DefaultProbes() Probes {
	return Probes{
		Landlock: landlockABI,
		Cgroup:   probeCgroup,
		Room:     proc.RoomLayers,
		LookPath: exec.LookPath,
		Repo:     repoState,
		NumCPU:   runtime.NumCPU,
		Engine:   probeEngine,
		Timeout:  DefaultTimeout,
	}
}

// Gather probes the machine and says what the configuration in `in` would
// do with it. The probes run concurrently; each command is bounded by
// p.Timeout, so Gather returns within about that time.
func Gather(ctx context.Context, p Probes, in Input) *Report {
	if p.Timeout <= 0 {
		p.Timeout = DefaultTimeout
	}
	r := &Report{CPUs: p.NumCPU()}
	tools := agentsToCheck(in)
	r.Agents = make([]Tool, len(tools))
	done := make(chan struct{})
	n := 0
	for i := range tools {
		n++
		go func() {
			r.Agents[i] = checkTool(ctx, p, tools[i], in.Root)
			done <- struct{}{}
		}()
	}
	n++
	go func() {
		r.Git = checkGit(ctx, p)
		done <- struct{}{}
	}()
	r.Landlock = landlockFrom(p.Landlock())
	r.Cgroup = p.Cgroup()
	var layers *sandbox.Layers
	if p.Room != nil {
		maxProcs := config.DefaultMaxProcesses
		if in.Config != nil {
			maxProcs = in.Config.Sandbox.MaxProcesses
		}
		l := p.Room(maxProcs)
		layers, r.Room = &l, l.List()
	}
	for range n {
		<-done
	}
	r.Config = evaluate(ctx, p, in, r, layers)
	return r
}

// ConfigUnreadable reports whether a .runner/ exists whose config could
// not be read: `runner doctor` then exits 1.
func (r *Report) ConfigUnreadable() bool {
	return r.Config.Found && r.Config.Error != ""
}
