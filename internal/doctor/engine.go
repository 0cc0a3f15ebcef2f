package doctor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/engine"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/inert"
)

// Engine is what `runner doctor` finds of [engine] (SPEC §22): whether
// the Temporal service answers, the workers polling its task queue, and
// whether git reaches the remote the workers share.
type Engine struct {
	Address   string `json:"address"`
	Namespace string `json:"namespace"`
	TaskQueue string `json:"task_queue"`
	// Error says why the service could not be asked; "" when it answered.
	Error string `json:"error,omitempty"`
	// Workers polled the task queue lately (the service remembers a few
	// minutes), most recent first.
	Workers []EngineWorker `json:"workers"`
	Remote  string         `json:"remote"`
	// RemoteError says why git could not reach the remote.
	RemoteError string `json:"remote_error,omitempty"`
}

// EngineWorker is a worker seen polling the task queue.
type EngineWorker struct {
	Name     string    `json:"name"`
	LastPoll time.Time `json:"last_poll"`
}

// probeEngine asks the service of e for the workers polling its task
// queue, and git whether it reaches e.Remote from the repository at root;
// each within timeout.
func probeEngine(ctx context.Context, e config.Engine, root string, timeout time.Duration) *Engine {
	out := &Engine{Address: e.Address, Namespace: e.Namespace, TaskQueue: e.TaskQueue, Remote: e.Remote}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if c, err := engine.Dial(sctx, e, "runner doctor"); err != nil {
		out.Error = err.Error()
	} else {
		pollers, err := engine.Pollers(sctx, c, e.TaskQueue)
		c.Close()
		if err != nil {
			out.Error = err.Error()
		}
		for _, p := range pollers {
			out.Workers = append(out.Workers, EngineWorker{Name: p.Name, LastPoll: p.LastPoll})
		}
		slices.SortFunc(out.Workers, func(a, b EngineWorker) int { return b.LastPoll.Compare(a.LastPoll) })
	}
	gctx, gcancel := context.WithTimeout(ctx, timeout)
	defer gcancel()
	repo, err := git.Open(gctx, root, git.Options{})
	if err == nil {
		err = repo.Reach(gctx, e.Remote, "refs/runner/doctor/")
	}
	if err != nil {
		out.RemoteError = err.Error()
	}
	return out
}

// engineLines are the lines that say what doctor found of [engine].
func engineLines(e *Engine, now time.Time) (service, workers, remote string) {
	service = fmt.Sprintf("temporal %s (namespace %s), task queue %s", inert.Line(e.Address), inert.Line(e.Namespace), inert.Line(e.TaskQueue))
	switch {
	case e.Error != "":
		service += ": CANNOT BE REACHED: " + inert.Line(e.Error)
		workers = "unknown"
	case len(e.Workers) == 0:
		workers = fmt.Sprintf("none polling the task queue: start `runner worker --address %s --task-queue %s` on the machines that run the agents",
			inert.Line(e.Address), inert.Line(e.TaskQueue))
	default:
		var names []string
		for _, w := range e.Workers {
			names = append(names, fmt.Sprintf("%s (polled %s ago)", inert.Line(w.Name), now.Sub(w.LastPoll).Round(time.Second)))
		}
		workers = strings.Join(names, ", ")
	}
	remote = inert.Line(e.Remote)
	if e.RemoteError != "" {
		remote += ": CANNOT BE REACHED: " + inert.Line(e.RemoteError)
	} else {
		remote += ": git reaches it"
	}
	return service, workers, remote
}
