package doctor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/room"
	"github.com/runner-cli/runner/internal/sandbox"
)

// Config is what the configuration would do on this machine.
type Config struct {
	// Found: a .runner/ exists (Dir).
	Found bool   `json:"found"`
	Dir   string `json:"dir,omitempty"`
	File  string `json:"file,omitempty"`
	// Error says why the config could not be read.
	Error string `json:"error,omitempty"`
	// Note says why there is no .runner/.
	Note     string    `json:"note,omitempty"`
	Sandbox  *Sandbox  `json:"sandbox,omitempty"`
	Work     *Work     `json:"work,omitempty"`
	Parallel *Parallel `json:"parallel,omitempty"`
	// Engine is what the service and the remote of [engine] say; nil
	// without [engine].
	Engine *Engine `json:"engine,omitempty"`
	// Notices are what would go wrong: an agent CLI missing, git too old
	// for loop.parallel.
	Notices []string `json:"notices,omitempty"`
}

// Sandbox is [sandbox] on this machine.
type Sandbox struct {
	Mode     string   `json:"mode"`
	Confined bool     `json:"confined"`
	Refuses  bool     `json:"refuses"` // "required" without a layer the machine should give: no run starts
	Writable []string `json:"writable,omitempty"`
	// Openings are what a confined agent's room would leave open.
	Openings []string `json:"openings,omitempty"`
	Says     string   `json:"says"`
}

// Work is where the agent would work: [git] and the repository.
type Work struct {
	Checkpoint bool       `json:"checkpoint"`
	Worktree   bool       `json:"worktree"`
	Repo       *RepoState `json:"repo,omitempty"` // nil: not asked (no checkpoints anyway)
	Says       string     `json:"says"`
}

// Parallel is loop.parallel against the CPUs.
type Parallel struct {
	Slots int `json:"slots"`
	CPUs  int `json:"cpus"`
	// Over: more slots than CPUs.
	Over bool   `json:"over"`
	Says string `json:"says"`
}

// evaluate says what in's configuration would do with the machine in r.
func evaluate(ctx context.Context, p Probes, in Input, r *Report, layers *sandbox.Layers) Config {
	c := Config{Found: in.Root != "", Dir: in.Root, File: in.File}
	switch {
	case in.Root == "":
		c.Note = in.NoDir
		return c
	case in.Err != nil:
		c.Error = in.Err.Error()
		return c
	case in.Config == nil:
		c.Error = "no configuration"
		return c
	}
	cfg := in.Config
	checkpoints := cfg.Git.Checkpoint && r.Git.OK
	c.Work = &Work{Checkpoint: cfg.Git.Checkpoint, Worktree: cfg.Git.Worktree}
	if checkpoints {
		repo := p.Repo(ctx, r.Git.Path, in.Root, p.Timeout)
		c.Work.Repo = &repo
		checkpoints = repo.Kind == RepoOK
	}
	// Landlock grants whole directories: only an agent in a worktree of
	// its own can be kept from .git and .runner/ (package loop).
	l := r.Landlock
	if !checkpoints || !cfg.Git.Worktree {
		l.ABI, l.Why, l.Hint = 0, "it works in the checkout itself, where .git and .runner/ would be within its reach", "git.worktree = true in a git repository with a commit confines it"
	} else if d := room.OpeningWritable(cfg, in.Root); d != "" {
		l.ABI, l.Why, l.Hint = 0, "the writable directory "+d+" holds the repository, its .git and .runner/", "narrow sandbox.writable or RUNNER_SANDBOX_WRITABLE"
	}
	c.Sandbox = sandboxOn(cfg, l, layers)
	c.Work.Says = workSays(cfg.Git, r.Git, c.Work.Repo)
	slots := max(cfg.Loop.Parallel, 1)
	c.Parallel = &Parallel{Slots: slots, CPUs: r.CPUs, Over: slots > r.CPUs}
	c.Parallel.Says = fmt.Sprintf("%s on %s", count(slots, "slot"), count(r.CPUs, "CPU"))
	if cfg.Engine.On() && p.Engine != nil {
		// The agents run on the workers: their programs and CPUs are the
		// workers' (the reviewer stays here).
		slots = cfg.Engine.Parallel
		c.Parallel = &Parallel{Slots: slots, CPUs: r.CPUs}
		c.Parallel.Says = fmt.Sprintf("%s in flight at once on the workers (engine.parallel)", count(slots, "iteration"))
		c.Engine = p.Engine(ctx, cfg.Engine, in.Root, p.Timeout)
		c.Engine.Hidden, c.Engine.HiddenWhy = keyHidden(c.Sandbox, layers)
	}
	switch {
	case cfg.Engine.On():
	case c.Parallel.Over:
		c.Parallel.Says += ": agents and their builds compete for them"
	case slots == 1:
		c.Parallel.Says += ": one task at a time (loop.parallel = 1)"
	}
	if slots > 1 && !checkpoints {
		c.Notices = append(c.Notices, fmt.Sprintf("loop.parallel = %d needs git checkpoints: the run would refuse to start", slots))
	} else if slots > 1 && !r.Git.AtLeast(MinGitParallel) {
		c.Notices = append(c.Notices, fmt.Sprintf("loop.parallel = %d needs git %d.%d or later: the run would refuse to start", slots, MinGitParallel[0], MinGitParallel[1]))
	}
	for _, t := range r.Agents {
		if cfg.Engine.On() && !slices.Contains(t.UsedBy, "review") {
			continue // a worker's program
		}
		if len(t.UsedBy) > 0 && !t.Found {
			c.Notices = append(c.Notices, fmt.Sprintf("%s: %s is %s, so it cannot run", strings.Join(t.UsedBy, ", "), t.Bin, t.Error))
		}
	}
	return c
}

// sandboxOn says what sandbox.mode does with the kernel's Landlock and
// the room's other layers (nil: not asked).
func sandboxOn(cfg *config.Config, l Landlock, layers *sandbox.Layers) *Sandbox {
	s := &Sandbox{Mode: cfg.Sandbox.Mode, Writable: cfg.Sandbox.Writable}
	who := "agents and guards"
	if cfg.Review.Enabled {
		who = "agents, guards and the reviewer"
	}
	confined := fmt.Sprintf("%s run confined (Landlock ABI %d)", who, l.ABI)
	if l.ABI > 0 && l.ABI < ScopeLandlockABI {
		confined += fmt.Sprintf("; signals and abstract sockets are not scoped (ABI %d)", ScopeLandlockABI)
	}
	why := l.Why
	if l.Hint != "" {
		why += " (" + l.Hint + ")"
	}
	switch {
	case s.Mode == config.SandboxOff:
		s.Says = "off → not confined, by choice"
		if l.Confines() {
			s.Says += fmt.Sprintf(" (Landlock ABI %d is there)", l.ABI)
		}
	case l.Confines() && layers != nil && s.Mode == config.SandboxRequired && layers.Missing():
		s.Refuses = true
		s.Openings = layers.Openings()
		s.Says = "required → the run would refuse to start: its room would leave open: " + strings.Join(s.Openings, "; ")
	case l.Confines():
		s.Confined = true
		s.Says = s.Mode + " → " + confined
		if layers != nil {
			s.Openings = layers.Openings()
		}
		if len(s.Openings) > 0 {
			s.Says += "; its room leaves open: " + strings.Join(s.Openings, "; ")
		}
	case s.Mode == config.SandboxRequired:
		s.Refuses = true
		s.Says = "required → the run would refuse to start: " + why
	default:
		s.Says = s.Mode + " → NOT confined: " + why + "; the run says so at its start"
	}
	return s
}

// workSays says where the agent would work.
func workSays(g config.Git, git Git, repo *RepoState) string {
	const none = "in the checkout itself, no commit per task: "
	switch {
	case !g.Checkpoint:
		return none + "git.checkpoint = false"
	case !git.Found:
		return none + "git is not found"
	case !git.OK:
		return none + fmt.Sprintf("git %d.%d or later is needed", MinGit[0], MinGit[1])
	case repo == nil:
		return "unknown: the repository was not looked at"
	case repo.Kind == RepoNone:
		return none + "not a git repository"
	case repo.Kind == RepoUnborn:
		return none + "the repository has no commit yet (commit once)"
	case repo.Kind != RepoOK:
		return "unknown: " + repo.Note
	case g.Worktree:
		return "in a linked worktree beside the checkout (git.worktree = true)"
	}
	return "in the checkout, switched to the run branch (git.worktree = false)"
}

// count formats "1 slot", "4 slots".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
