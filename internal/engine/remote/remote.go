// Package remote is the engine's lane (SPEC §22): an iteration whose
// agent and guards run on a `runner worker` process, anywhere, through
// the Temporal service of [engine] (package engine). The coordinator
// begins each iteration as for a local slot (the ledger's started phase,
// the context files, the scrubbed prompt); where a slot would run the
// agent and the guards, this lane pushes the checkpoint to the shared
// git remote and submits the iteration's workflow, signed with the
// engine key; a worker runs them and sends back the work as a commit and
// the guards' results. The work is put in the slot's worktree, and from
// there the iteration goes on as a local one: its judged tree, the
// review, the record, the integration with the guards run again on the
// integrated result, the run branch.
//
// It owns the run's engine client, the run's id (state/engine.json) and
// the refs it pushes to and fetches from engine.remote. It must not
// touch the ledger but through its Hooks, nor the tree or the run branch.
package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/runner-cli/runner/internal/engine"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/lane"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// Engine is the run's engine: its client, the run's id, and the key it
// signs the inputs and verifies the outputs with (nil: none).
type Engine struct {
	c   client.Client
	run string
	key engine.Key
	// setupFailures counts the iterations in a row whose worker failed
	// before their agent started (failing).
	setupFailures int

	env     *lane.Env
	notices io.Writer
	hooks   Hooks
}

// Hooks are the coordinator's, called under the run's lock.
type Hooks struct {
	// Journal appends rec to the journal (a result refused).
	Journal func(rec state.Record) error
	// Took says that worker took iteration meta of the lane of slot l
	// (meta.Worker set): the ledger's record of it, the progress line,
	// the live area.
	Took func(l *lane.Local, meta *state.Meta, worker string)
}

// Open connects to the Temporal service of [engine], when set; nil
// without [engine]. notices is where it says what it does.
func Open(ctx context.Context, env *lane.Env, notices io.Writer, hooks Hooks) (*Engine, error) {
	cfg, p := env.Config(), env.Paths
	e := cfg.Engine
	if !e.On() {
		return nil, nil
	}
	main := env.Branch.Main()
	if main == nil {
		return nil, fmt.Errorf("[engine] needs git checkpoints: the workers fetch the checkpoint from engine.remote and push their work there; run in a git repository with a commit and git.checkpoint = true")
	}
	run, err := runID(p)
	if err != nil {
		return nil, err
	}
	en := &Engine{run: run, env: env, notices: notices, hooks: hooks}
	key, err := en.engineKey()
	if err != nil {
		return nil, fmt.Errorf("%s [engine] key_file: %w", p.Rel(p.Config()), err)
	}
	if err := main.Repo().Reach(ctx, e.Remote, engine.RunRefs(run)); err != nil {
		return nil, fmt.Errorf("%s [engine] remote = %q: %w; give a URL or a path that this machine and every worker can reach "+
			"(a bare repository on a shared disk counts: git init --bare PATH)", p.Rel(p.Config()), e.Remote, err)
	}
	host, _ := os.Hostname()
	c, err := engine.Dial(ctx, e, fmt.Sprintf("runner run %s:%d", host, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("%s [engine]: %w", p.Rel(p.Config()), err)
	}
	en.c, en.key = c, key
	fmt.Fprintf(notices, "runner: iterations run on the workers of task queue %s at %s (run %s)\n", inert.Line(e.TaskQueue), inert.Line(e.Address), run)
	return en, nil
}

// Close closes the engine's client.
func (e *Engine) Close() {
	if e != nil {
		e.c.Close()
	}
}

// runID is the run's id, made once and kept in the state folder: a new
// ledger is a new run, whose iteration numbers start again.
func runID(p state.Paths) (string, error) {
	have, err := state.LoadEngine(p)
	if err == nil && have.Run != "" {
		return have.Run, nil
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	have = state.Engine{Run: hex.EncodeToString(b[:])}
	if err := state.SaveEngine(p, have); err != nil {
		return "", err
	}
	return have.Run, nil
}

// Lane is the engine's lane of an iteration: its agent and guards run on
// a worker, their work brought into the slot here.
type Lane struct {
	*lane.Local // the slot the work is brought into
	e           *Engine
	// start is what the next agent run starts from: the checkpoint, then
	// what the runs before it left (an agent stopped by a rate limit goes
	// on with its own work, as in a local slot's worktree).
	start string
	// took says a result of a worker was taken in the lane, its guards'
	// judgement (nil when they did not run) in judgement.
	took      bool
	judgement *iteration.Judgement
}

// Lane is the lane of an iteration begun in the slot l whose agent runs
// on a worker.
func (e *Engine) Lane(l *lane.Local) lane.Lane {
	return &Lane{Local: l, e: e}
}

// Start probes the task's checks in the slot, on its untouched
// checkpoint, which the agent's first run starts from.
func (l *Lane) Start(ctx context.Context, node *tree.Node, meta *state.Meta) {
	l.Probe(ctx, node, meta)
	l.start = l.Tree().Head()
}

// Watched is false: the lane's agent runs elsewhere.
func (l *Lane) Watched() bool { return false }

// remoteRetries are the waits between tries of a push to engine.remote
// or a fetch from it: a remote across a network may be away for a
// moment, which must not end the night.
var remoteRetries = []time.Duration{2 * time.Second, 8 * time.Second, 30 * time.Second}

// retryRemote runs call, and again after each of remoteRetries while it
// fails and ctx lives; the last error is returned.
func (e *Engine) retryRemote(ctx context.Context, call func() error) error {
	err := call()
	for _, wait := range remoteRetries {
		if err == nil || ctx.Err() != nil {
			return err
		}
		e.env.Log.Warn("the git remote did not answer; trying again", "in", wait, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		err = call()
	}
	return err
}
