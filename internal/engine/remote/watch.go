package remote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/runner-cli/runner/internal/engine"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
	"github.com/runner-cli/runner/internal/live"
	"github.com/runner-cli/runner/internal/state"
)

// await waits for workflow id's result, the agent run of node on
// attempt, saying which worker took it once Temporal knows. Interrupted,
// it cancels the workflow and waits for it to stop on its worker.
func (l *Lane) await(ctx context.Context, id, queue string, meta *state.Meta, node string, attempt int) (*engine.Output, error) {
	e := l.e
	finished, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		l.watch(ctx, id, queue, meta, finished)
	}()
	out, err := engine.Await(ctx, e.c, id, e.key, node, attempt)
	close(finished)
	<-watched
	if ctx.Err() != nil {
		// Ctrl-C: nothing keeps running on the worker. Which worker took
		// it, if one did, is asked first: the watch may not have seen it
		// yet, and an iteration no worker took spends no attempt.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		if s, derr := engine.Describe(cctx, e.c, id); derr == nil && s.Worker != "" {
			l.Lock().Inside(func() { meta.Worker = s.Worker })
		}
		if cerr := engine.Cancel(cctx, e.c, id); cerr != nil {
			e.env.Log.Warn("could not cancel the iteration on its worker", "workflow", id, "err", cerr)
		}
		cancel()
	}
	return out, err
}

// watch follows workflow id until finished is closed: it says
// which worker took it once Temporal knows (or that none has for a
// while), and keeps the latest event the worker reported in the run
// folder (live.WorkerEventFile), where status, the live area and the
// dashboard read it.
func (l *Lane) watch(ctx context.Context, id, queue string, meta *state.Meta, finished <-chan struct{}) {
	e, n := l.e, meta.Iteration
	eventFile := filepath.Join(e.env.Paths.RunDir(n), live.WorkerEventFile)
	defer os.Remove(eventFile)
	said, since, worker, event := false, time.Now(), "", ""
	var handing time.Time // since when how its activity ended waits to be taken in
	how := ""             // how it ended, once known: it ends once
	for {
		if s, err := engine.Describe(ctx, e.c, id); err == nil {
			if worker == "" && s.Worker != "" {
				worker = s.Worker
				l.Lock().Inside(func() {
					meta.Worker = worker
					e.hooks.Took(l.Local, meta, worker)
				})
			}
			if worker != "" && s.Running && s.Worker == "" {
				// The activity ended; the workflow's last step, which takes
				// in how, runs on a worker too, and none has run it yet.
				if how == "" {
					how, _ = engine.ActivityEnded(ctx, e.c, id)
				}
				if how != "" {
					if handing.IsZero() {
						handing = time.Now()
					}
					s.Event = how + " on worker " + worker + "; what came of it waits for a worker to poll the task queue"
					if !said && time.Since(handing) > workerWait {
						said = true
						l.Lock().Inside(func() {
							fmt.Fprintf(e.notices, "runner: iteration %d %s on worker %s, and what came of it has waited %s for a worker on task queue %s to take it in; is `runner worker --task-queue %s` running?\n",
								n, how, inert.Line(worker), workerWait, inert.Line(queue), inert.Line(queue))
						})
					}
				}
			}
			if s.Event != event {
				event = s.Event
				_ = fsutil.ReplaceFile(eventFile, []byte(event+"\n"), 0o644, fsutil.NotSynced)
			}
		}
		if worker == "" && !said && time.Since(since) > workerWait {
			said = true
			l.Lock().Inside(func() {
				fmt.Fprintf(e.notices, "runner: iteration %d has waited %s for a worker on task queue %s; is `runner worker --task-queue %s` running?\n",
					n, workerWait, inert.Line(queue), inert.Line(queue))
			})
		}
		every := time.Second
		if worker == "" {
			every = 250 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return
		case <-finished:
			return
		case <-time.After(every):
		}
	}
}

// workerWait is how long an iteration waits for a worker before the run
// says so.
const workerWait = 30 * time.Second
