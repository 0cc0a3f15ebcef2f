package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/engine"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/sandbox"
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
	// KeyFile is the engine key file this machine uses (engine.key_file,
	// or RUNNER_ENGINE_KEY_FILE); "" when none is named. KeyError says
	// why it cannot be used.
	KeyFile  string `json:"key_file,omitempty"`
	KeyError string `json:"key_error,omitempty"`
	// Hidden says whether the rooms of this machine's agents, guards and
	// reviewer hide the key file (keyHidden); HiddenWhy why they do not.
	Hidden    bool   `json:"key_hidden"`
	HiddenWhy string `json:"key_hidden_why,omitempty"`
}

// EngineWorker is a worker seen polling the task queue.
type EngineWorker struct {
	Name     string    `json:"name"`
	LastPoll time.Time `json:"last_poll"`
	// Key is what the challenge found (engine.Challenge): "same" (it
	// holds this machine's key), "other" (another key), "no answer", or
	// "" when there was no key to check it against; KeyError says more.
	Key      string `json:"key,omitempty"`
	KeyError string `json:"key_error,omitempty"`
}

// Outcomes of a worker's challenge.
const (
	KeySame     = "same"
	KeyOther    = "other"
	KeyNoAnswer = "no answer"
)

// probeEngine asks the service of e for the workers polling its task
// queue, and git whether it reaches e.Remote from the repository at root;
// each within timeout.
func probeEngine(ctx context.Context, e config.Engine, root string, timeout time.Duration) *Engine {
	out := &Engine{Address: e.Address, Namespace: e.Namespace, TaskQueue: e.TaskQueue, Remote: e.Remote}
	key := out.readKey(e, root)
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if c, err := engine.Dial(sctx, e, "runner doctor"); err != nil {
		out.Error = err.Error()
	} else {
		pollers, err := engine.Pollers(sctx, c, e.TaskQueue)
		if err != nil {
			out.Error = err.Error()
		}
		for _, p := range pollers {
			out.Workers = append(out.Workers, EngineWorker{Name: p.Name, LastPoll: p.LastPoll})
		}
		slices.SortFunc(out.Workers, func(a, b EngineWorker) int { return b.LastPoll.Compare(a.LastPoll) })
		if key != nil {
			challengeAll(sctx, c, e.TaskQueue, key, out.Workers, timeout)
		}
		c.Close()
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

// readKey reads the engine key this machine names, noting in e which
// file it is and what is wrong with it; nil when it cannot be used.
func (e *Engine) readKey(cfg config.Engine, root string) engine.Key {
	path, err := engine.KeyPath(cfg.KeyFile)
	if err == nil && path == "" {
		return nil
	}
	e.KeyFile = path
	if err == nil {
		err = engine.CheckKeyPlace(path, root, nil)
	}
	var key engine.Key
	if err == nil {
		key, err = engine.LoadKey(path)
	}
	if err != nil {
		e.KeyError = err.Error()
		return nil
	}
	return key
}

// keyHidden says whether the rooms of the programs the configuration
// runs on this machine hide the engine key: they are confined (s), in
// rooms with a mount namespace of their own (layers, nil when the machine
// was not asked).
func keyHidden(s *Sandbox, layers *sandbox.Layers) (bool, string) {
	switch {
	case s == nil:
		return false, "the configuration could not be read"
	case !s.Confined && !s.Refuses:
		return false, "the agents, guards and reviewer here would not be confined (sandbox: " + s.Says + ")"
	case layers == nil:
		return false, "what this machine gives the rooms is unknown"
	}
	return layers.HidesPaths()
}

// challengeAll asks each worker, at once, whether it holds key.
func challengeAll(ctx context.Context, c client.Client, queue string, key engine.Key, workers []EngineWorker, timeout time.Duration) {
	var wg sync.WaitGroup
	for i := range workers {
		w := &workers[i]
		wg.Go(func() {
			err := engine.Challenge(ctx, c, queue, w.Name, key, min(timeout, challengeTimeout))
			switch {
			case err == nil:
				w.Key = KeySame
			case errors.Is(err, engine.ErrKeyDiffers):
				w.Key = KeyOther
			default:
				w.Key, w.KeyError = KeyNoAnswer, err.Error()
			}
		})
	}
	wg.Wait()
}

// challengeTimeout bounds a worker's answer to a challenge.
const challengeTimeout = 10 * time.Second

// engineLines are the lines that say what doctor found of [engine].
func engineLines(e *Engine, now time.Time) (service, workers, remote, key string) {
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
			names = append(names, fmt.Sprintf("%s (polled %s ago%s)", inert.Line(w.Name), now.Sub(w.LastPoll).Round(time.Second), workerKeyText(w)))
		}
		workers = strings.Join(names, ", ")
	}
	remote = inert.Line(e.Remote)
	if e.RemoteError != "" {
		remote += ": CANNOT BE REACHED: " + inert.Line(e.RemoteError)
	} else {
		remote += ": git reaches it"
	}
	return service, workers, remote, keyText(e)
}

// keyText says what doctor found of the engine key.
func keyText(e *Engine) string {
	switch {
	case e.KeyFile == "":
		return fmt.Sprintf("NOT SET (engine.key_file, or %s): the engine is not protected: any program that reaches the Temporal service, an agent among them, "+
			"can submit iterations to the workers and answer for them; %s", engine.KeyEnv, engine.MakeKeyHint)
	case e.KeyError != "":
		return "CANNOT BE USED: " + inert.Line(e.KeyError)
	case !e.Hidden:
		return inert.Line(e.KeyFile) + ": set; NOT HIDDEN from the agents: " + inert.Line(e.HiddenWhy) + ", so the engine is not protected from them"
	}
	return inert.Line(e.KeyFile) + ": set, hidden from the agents' rooms"
}

// workerKeyText says what a worker's challenge found, after its poll.
func workerKeyText(w EngineWorker) string {
	switch w.Key {
	case KeySame:
		return ", same key"
	case KeyOther:
		return ", ANOTHER KEY: give it this machine's key file"
	case KeyNoAnswer:
		return ", did not prove its key: " + inert.Line(w.KeyError)
	}
	return ""
}
