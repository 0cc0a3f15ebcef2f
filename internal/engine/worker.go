package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/sandbox"
)

// Worker runs iterations for coordinators: `runner worker`.
type Worker struct {
	// Dir holds its repository (the objects it fetches), the working
	// trees and run folders of the iterations under way, and their
	// temporary directories.
	Dir string
	// Name is recorded as `worker` in each iteration's meta.json.
	Name string
	// Slots is how many iterations it runs at once.
	Slots int
	// Log gets a line per iteration started and ended.
	Log io.Writer
	// Room is the room of a program working in work with its temporary
	// directory tmp under cfg: the rule a local slot is confined by
	// (room.For).
	Room func(cfg *config.Config, work, tmp string) *sandbox.Room
	// Layers is what this machine gives those rooms, layer by layer, for
	// a room bounded to maxProcesses (proc.RoomLayers when nil): what they
	// leave open goes back to the coordinator with each iteration.
	Layers func(maxProcesses int) sandbox.Layers
	// Key verifies the inputs and signs the outputs (nil: none, which
	// Unprotected must allow).
	Key Key
	// Unprotected lets the worker run without a key: it then runs any
	// input the task queue gives it, from whoever could submit one.
	Unprotected bool
	// Sandbox is the worker's own floor (--sandbox): "auto" confines every
	// iteration where the machine can, "required" refuses to start where
	// it cannot, "off" lets each iteration's [sandbox] decide. No input
	// lowers it.
	Sandbox string

	repo   *git.Repo
	queue  string
	floor  bool           // every iteration is confined, whatever its input asks
	gitMu  sync.Mutex     // one change to repo at a time
	active sync.WaitGroup // the iterations under way (runIteration)
	logMu  sync.Mutex
}

// StopGrace is how long the iterations under way may go on once the
// worker is asked to stop; then they are cancelled, their processes
// stopped.
const StopGrace = 10 * time.Second

// heartbeatEvery is how often an iteration's heartbeat reaches the
// service.
const heartbeatEvery = 2 * time.Second

// DirEnv is set in the environment of every program a worker starts: a
// worker started again in the same directory stops what a killed one
// left running, as the runner does (SPEC §8).
const DirEnv = "RUNNER_WORKER_DIR"

// Run polls queue on c and runs iterations until ctx ends; then it stops
// taking new ones, and those under way get StopGrace to finish before
// they are cancelled, each stopped with its processes.
func (w *Worker) Run(ctx context.Context, c client.Client, queue string) error {
	dir, err := filepath.Abs(w.Dir)
	if err != nil {
		return err
	}
	w.Dir, w.queue = dir, queue
	if w.Slots < 1 {
		w.Slots = 1
	}
	if err := w.checkStart(); err != nil {
		return err
	}
	release, err := lockDir(w.Dir)
	if err != nil {
		return err
	}
	defer release()
	w.stopLeftovers()
	if w.repo, err = git.Init(ctx, filepath.Join(w.Dir, "repo"), git.Options{}); err != nil {
		return fmt.Errorf("the worker's repository in %s: %w", w.Dir, err)
	}
	w.keepLeftovers(ctx)
	for _, d := range []string{"work", "runs", "tmp"} {
		_ = os.RemoveAll(filepath.Join(w.Dir, d)) // what a killed worker left
	}
	_ = w.repo.PruneWorktrees(ctx)
	w.forgetAll(ctx)
	wk := worker.New(c, queue, worker.Options{
		MaxConcurrentActivityExecutionSize: w.Slots,
		Identity:                           w.Name,
		WorkerStopTimeout:                  StopGrace,
		// Heartbeats reach the service every 2 s at most, not every 80%
		// of the heartbeat timeout: the service restarted meanwhile finds
		// a recent one, and the iteration keeps its worker.
		MaxHeartbeatThrottleInterval:     heartbeatEvery,
		DefaultHeartbeatThrottleInterval: heartbeatEvery,
	})
	wk.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
	wk.RegisterActivityWithOptions(w.runIteration, activity.RegisterOptions{Name: ActivityName})
	if err := wk.Start(); err != nil {
		return fmt.Errorf("start the worker on task queue %s: %w", queue, err)
	}
	challenges := w.answerChallenges(c)
	if err := challenges.Start(); err != nil {
		wk.Stop()
		return fmt.Errorf("start the worker on task queue %s: %w", ChallengeQueue(queue, w.Name), err)
	}
	w.logf("runner worker %s: polling task queue %s, %d at a time, in %s", w.Name, queue, w.Slots, w.Dir)
	w.sayProtection()
	<-ctx.Done()
	challenges.Stop()
	wk.Stop()
	// Stop cancels what is still under way after StopGrace, and returns
	// without waiting for it: each iteration still stops its processes,
	// keeps its agent's work and tidies up, within cleanupGrace.
	ended := make(chan struct{})
	go func() { w.active.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(cleanupGrace):
		w.logf("runner worker %s: iterations still ending after %s; stopping all the same", w.Name, cleanupGrace)
	}
	w.logf("runner worker %s: stopped", w.Name)
	return nil
}

// cleanupGrace bounds how long a stopping worker waits for its cancelled
// iterations to end: their processes stopped, their agents' work pushed
// (keepCancelled allows a minute), their folders removed.
const cleanupGrace = 75 * time.Second

// stopLeftovers stops the processes a worker killed in this directory
// left running (an agent, a guard), by the variable every one of them
// has in its environment.
func (w *Worker) stopLeftovers() {
	mark := DirEnv + "=" + w.Dir
	for _, cg := range proc.CgroupsWithEnv(mark) {
		_ = proc.KillCgroup(cg, 2*time.Second)
	}
	for _, g := range proc.GroupsWithEnv(mark) {
		_ = proc.KillGroup(g, 2*time.Second)
	}
}

// forgetAll deletes the checkpoint refs a previous life fetched: none of
// its iterations is under way any more, and their objects may go.
func (w *Worker) forgetAll(ctx context.Context) {
	refs, _ := w.repo.RefsUnder(ctx, "refs/runner/engine/")
	for _, ref := range refs {
		_ = w.repo.DeleteRef(ctx, ref, "")
	}
}

// layers is what this machine gives a room bounded to maxProcesses.
func (w *Worker) layers(maxProcesses int) sandbox.Layers {
	if w.Layers != nil {
		return w.Layers(maxProcesses)
	}
	return proc.RoomLayers(maxProcesses)
}

func (w *Worker) logf(format string, args ...any) {
	if w.Log == nil {
		return
	}
	w.logMu.Lock()
	defer w.logMu.Unlock()
	fmt.Fprintf(w.Log, format+"\n", args...)
}
