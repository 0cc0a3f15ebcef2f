package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/engine"
	"github.com/runner-cli/runner/internal/room"
)

// workerOpts are the flags of `runner worker`.
type workerOpts struct {
	engine      config.Engine
	name        string
	slots       int
	sandbox     string
	unprotected bool
}

func newWorkerCmd(g *globals) *cobra.Command {
	o := &workerOpts{}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run iterations for coordinators on a Temporal task queue (SPEC §22)",
		Long: `Run iterations for ` + "`runner run`" + ` coordinators whose config has an [engine]
table, on this machine: poll the Temporal task queue, and for each iteration fetch
its checkpoint from the run's git remote, run its agent confined as a local slot
would, push the work back as a commit, run the guards and the task's checks,
and send back their results and the run folder's files. It needs only outbound
connections (to the Temporal service and the git remote); the agent's
credentials stay on this machine.

It runs only iterations signed with the engine key (--key-file, or
RUNNER_ENGINE_KEY_FILE: the same file as the coordinator's engine.key_file)
and signs what it sends back; an iteration it cannot verify is refused before
anything runs, in its log and to its coordinator. Without a key it refuses to
start, unless --unprotected.

--sandbox is its floor, which no iteration lowers: auto (the default) confines
every iteration where this machine can, and refuses one whose config asks for
sandbox.mode = "off"; required refuses to start where the machine cannot
confine; off lets each iteration's [sandbox] decide.

--dir is where the worker keeps its repository and the iterations under way
(default: $XDG_STATE_HOME/runner/worker, or ~/.local/state/runner/worker); it
must lie outside every directory the agents' rooms may write (~/.cache, say),
and is this worker's alone (a second worker there is refused: give each its
own, or raise --slots). A worker started again in the same directory stops
what a killed one left running there.

Ctrl-C (or SIGTERM) stops taking iterations; those under way get 10 seconds to
finish, then they are cancelled: their processes stopped, what their agents had
written pushed to the remote (refs/runner/engine/<run>/<n>.<k>/leftover), their
folders removed (their coordinator records them interrupted, and any worker runs
them again). The worker exits once that is done, within 75 seconds more.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWorker(cmd, g, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.engine.Address, "address", "127.0.0.1:7233", "the Temporal service's frontend, host:port")
	f.StringVar(&o.engine.Namespace, "namespace", "default", "the Temporal namespace")
	f.StringVar(&o.engine.TaskQueue, "task-queue", "runner", "the task queue the coordinators submit to (engine.task_queue)")
	f.StringVar(&o.name, "name", "", "this worker's name in meta.json, status and the report (default host:pid)")
	f.IntVar(&o.slots, "slots", 1, "iterations run at once on this machine")
	f.BoolVar(&o.engine.TLS, "tls", false, "connect with TLS (Temporal Cloud)")
	f.StringVar(&o.engine.APIKeyEnv, "api-key-env", "", "the environment variable holding a Temporal Cloud API key (turns TLS on)")
	f.StringVar(&o.engine.KeyFile, "key-file", "", "the engine key file, the coordinator's engine.key_file ("+engine.KeyEnv+" wins over it)")
	f.BoolVar(&o.unprotected, "unprotected", false, "run without an engine key: any program that reaches the Temporal service can have this worker run a command")
	f.StringVar(&o.sandbox, "sandbox", engine.FloorAuto, "this worker's confinement floor: auto, required or off")
	return cmd
}

func runWorker(cmd *cobra.Command, g *globals, o *workerOpts) error {
	dir := g.Dir
	if dir == "" {
		var err error
		if dir, err = engine.DefaultDir(); err != nil {
			return fmt.Errorf("worker: %w", err)
		}
	}
	if o.slots < 1 || o.slots > config.MaxParallel {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("--slots %d: want 1 to %d", o.slots, config.MaxParallel)}
	}
	name := o.name
	if name == "" {
		host, _ := os.Hostname()
		name = host + ":" + strconv.Itoa(os.Getpid())
	}
	o.engine.Kind = config.EngineTemporal
	key, err := workerKey(o, dir)
	if err != nil {
		return err
	}
	g.superviseChildren()
	ctx := cmd.Context()
	c, err := engine.Dial(ctx, o.engine, name)
	if err != nil {
		return err
	}
	defer c.Close()
	w := &engine.Worker{Dir: dir, Name: name, Slots: o.slots, Log: g.streams.Out, Room: room.For,
		Key: key, Unprotected: o.unprotected, Sandbox: o.sandbox}
	return w.Run(ctx, c, o.engine.TaskQueue)
}

// workerKey reads the worker's engine key, nil when none is named; the
// file may not lie where an agent's room may write, nor in the worker's
// folder, and rooms are told to hide it.
func workerKey(o *workerOpts, dir string) (engine.Key, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	return engine.ReadKey(o.engine.KeyFile, "", append(room.Writable(&config.Config{}), dir))
}
