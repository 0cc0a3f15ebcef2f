package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/engine"
	"github.com/runner-cli/runner/internal/loop"
)

// workerOpts are the flags of `runner worker`.
type workerOpts struct {
	engine config.Engine
	name   string
	slots  int
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

--dir is where the worker keeps its repository and the iterations under way
(default: the user's cache directory, runner/worker); it is this worker's alone
(a second worker there is refused: give each its own, or raise --slots). A
worker started again in the same directory stops what a killed one left
running there.

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
	return cmd
}

func runWorker(cmd *cobra.Command, g *globals, o *workerOpts) error {
	dir := g.Dir
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("worker: no --dir given and no cache directory: %w", err)
		}
		dir = filepath.Join(cache, "runner", "worker")
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
	g.superviseChildren()
	ctx := cmd.Context()
	c, err := engine.Dial(ctx, o.engine, name)
	if err != nil {
		return err
	}
	defer c.Close()
	w := &engine.Worker{Dir: dir, Name: name, Slots: o.slots, Log: g.streams.Out, Room: loop.RoomFor}
	return w.Run(ctx, c, o.engine.TaskQueue)
}
