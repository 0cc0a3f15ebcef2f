// Package lane is where an iteration's work runs (SPEC §14, §22): the
// run branch's working tree, a parallel slot's worktree, or a worker on
// another machine (package remote, beside the engine). The coordinator
// (package loop) chooses a lane once per iteration and hands it the
// iteration's work through one interface, Lane; it never asks which kind
// it has. A lane runs the agent and the judges and says what came of
// them (Result); the coordinator decides and records.
//
// It owns the work in a working tree while it runs: the agent's and the
// guards' processes there, their rooms, what is hidden from the guards,
// and the marker of when the work on a task started. It must not touch
// the ledger but through Care, nor the tree, the prompt or an outcome:
// those are the coordinator's.
package lane

import (
	"context"
	"sync"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/room"
	"github.com/runner-cli/runner/internal/runbranch"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// Lane is where one iteration's work runs.
type Lane interface {
	// Here is the working tree on this machine the iteration's work ends
	// in: where its review, its integration and its record happen.
	Here() *Local
	// Start starts the work on node's task in the lane, before its
	// agent's first run: its checks probed on the untouched checkpoint
	// (SPEC §18), and when the work started marked.
	Start(ctx context.Context, node *tree.Node, meta *state.Meta)
	// Run runs the iteration's agent once and says how it ended.
	Run(ctx context.Context, s Spec) (Result, error)
	// Judge runs the guards and the task's checks on the work its agent
	// says is done, or takes the judgement made where it ran, and notes
	// it in meta (Checks, Baseline). judged is called with a judgement
	// the guards made, before the runner's files are checked again.
	Judge(ctx context.Context, meta *state.Meta, judged Judged) ([]state.GuardMeta, string, error)
	// Adopt resolves iteration in, which a previous coordinator left in
	// flight while its agent ran where the lane runs agents, as Run would
	// have; found is false when nothing ran it there.
	Adopt(ctx context.Context, in *state.InFlight, meta *state.Meta) (res Result, found bool, err error)
	// Watched says whether programs of the lane run unconfined on this
	// machine beside other slots, which could forge the runner's journal
	// and tree.json: the coordinator then watches them (SPEC §14, §20).
	Watched() bool
}

// Judged is what the coordinator notes of a judgement the guards made
// (what they changed of their judges, test reports it could not read),
// failing it where it must.
type Judged func(j *iteration.Judgement) error

// Spec is one run of an iteration's agent.
type Spec struct {
	// Meta is the iteration's record: the lane notes in it where the
	// agent ran and what came back.
	Meta *state.Meta
	// Request is what the agent is given, its Retry set.
	Request executor.Request
	// Executor is the executor the chain chose (Name, of Preset), its
	// options resolved.
	Executor     executor.Options
	Name, Preset string
}

// Result is how one run of an iteration's agent in a lane ended. Agent
// or StartErr is set when the agent ran, or was tried, where the lane
// runs agents; otherwise one of NotRun, Aside, Lost or Ended says why
// there is no result.
type Result struct {
	// Agent is the agent's result.
	Agent *executor.Result
	// Tamper is what the agent changed of its judges, kept and put back.
	Tamper []state.TamperMeta
	// StartErr says the agent could not be started; Unavailable, that it
	// started and cannot work at all here (executor.UnavailableError).
	// Either sets its executor aside.
	StartErr, Unavailable error
	// NotRun is the runner's own failure before any agent started: the
	// iteration is set aside, no attempt spent.
	NotRun error
	// Aside says why nothing ran (the run was interrupted before a worker
	// took the iteration): set aside, no attempt spent.
	Aside string
	// Lost says why no result came back: the iteration is recorded as
	// interrupted, an attempt unless meta.NoAttempt. After, when set, is
	// called once it is recorded: an error stops the run.
	Lost  string
	After func() error
	// Ended says why an adopted iteration ends without an attempt.
	Ended string
}

// Care is the ledger's care of the runner's files around a program that
// runs on this machine (package ledger): kept before the agent starts,
// put back as soon as it exits and after the guards.
type Care interface {
	KeepBeforeAgent()
	AgentExited(n int) error
	GuardsStarting()
	GuardsEnded(n int) error
}

// Env is what every lane of a run works with.
type Env struct {
	Paths  state.Paths
	Config func() *config.Config // the config in force, read under the run's lock
	Rooms  *room.Policy
	Branch *runbranch.Branch
	Care   Care
	Lock   *Lock
	Log    *log.Logger
	// Baseline is the baseline of key for guards (package preflight).
	Baseline func(guards []config.Guard, key string) *state.Baseline
	// Tree is tree.json as it is now.
	Tree func() (*tree.Tree, error)
}

// Lock is the run's lock, which the goroutines of parallel slots share:
// each holds it but while a process works or a wait lasts. Without slots
// it is not taken.
type Lock struct {
	mu *sync.Mutex
}

// Take makes the lock real and takes it: the run works on several tasks
// at once.
func (l *Lock) Take() {
	l.mu = &sync.Mutex{}
	l.mu.Lock()
}

// Drop gives the lock up for good: the run goes on one task at a time.
func (l *Lock) Drop() {
	if l.mu != nil {
		l.mu.Unlock()
		l.mu = nil
	}
}

// Outside runs f without the run's lock, so that other slots go on while
// it waits for a process or a timer; what f reads of the run's shared
// state it must read before. Without slots it just runs f.
func (l *Lock) Outside(f func()) {
	if l.taken() {
		l.mu.Unlock()
		defer l.mu.Lock()
	}
	f()
}

// Inside runs f under the run's lock from code that runs outside it (a
// process's start callback, a slot's goroutine).
func (l *Lock) Inside(f func()) {
	if l.taken() {
		l.mu.Lock()
		defer l.mu.Unlock()
	}
	f()
}

// taken says the run works on several tasks at once: the lock is real.
func (l *Lock) taken() bool { return l != nil && l.mu != nil }
