package engine

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"

	"github.com/runner-cli/runner/internal/config"
)

// Dial connects to the Temporal service of e, as identity. A service that
// cannot be reached is an error naming the address.
func Dial(ctx context.Context, e config.Engine, identity string) (client.Client, error) {
	opts := client.Options{
		HostPort:  e.Address,
		Namespace: e.Namespace,
		Identity:  identity,
		Logger:    quietLogger(),
	}
	if e.TLS || e.APIKeyEnv != "" {
		opts.ConnectionOptions.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if e.APIKeyEnv != "" {
		key := os.Getenv(e.APIKeyEnv)
		if key == "" {
			return nil, fmt.Errorf("%s, named as the variable holding the Temporal API key (engine.api_key_env in config.toml; "+
				"--api-key-env of runner worker), is not set: export it with the key, or leave the setting out", e.APIKeyEnv)
		}
		opts.Credentials = client.NewAPIKeyStaticCredentials(key)
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("the Temporal service at %s (namespace %s): %w; is it running? (`temporal server start-dev` runs one)", e.Address, e.Namespace, err)
	}
	return c, nil
}

// quietLogger keeps the SDK's own log to warnings and errors, on stderr.
func quietLogger() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// Submit starts iteration in's workflow on queue. A workflow of the same
// id that already exists, running or closed, is not started again: its
// run is returned (adopted). While the service cannot be reached it
// keeps asking until ctx ends, as Await does: a start whose answer was
// lost is then found as that workflow. The input is signed with key
// (nil: unsigned, which a worker with a key refuses).
func Submit(ctx context.Context, c client.Client, queue string, key Key, in Input) (client.WorkflowRun, error) {
	id := WorkflowID(in.Run, in.Iteration, in.Retry)
	signed, err := key.SignInput(in)
	if err != nil {
		return nil, fmt.Errorf("submit %s: %w", id, err)
	}
	for {
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID:                                       id,
			TaskQueue:                                queue,
			WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
			WorkflowExecutionErrorWhenAlreadyStarted: true,
		}, WorkflowName, signed)
		var dup *serviceerror.WorkflowExecutionAlreadyStarted
		switch {
		case errors.As(err, &dup):
			return c.GetWorkflow(ctx, id, ""), nil
		case err == nil:
			return run, nil
		case !transient(err) || ctx.Err() != nil:
			return nil, fmt.Errorf("submit %s: %w", id, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("submit %s: %w", id, ctx.Err())
		case <-time.After(askAgain):
		}
	}
}

// State is what Temporal knows of an iteration's workflow.
type State struct {
	Found   bool
	Running bool
	// Worker is the identity of the worker that took its activity ("":
	// none yet).
	Worker string
	// Phase and Event are what the worker last said it was doing
	// (Progress).
	Phase, Event string
}

// Describe says what Temporal knows of workflow id.
func Describe(ctx context.Context, c client.Client, id string) (State, error) {
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return State{}, nil
	}
	if err != nil {
		return State{}, err
	}
	s := State{Found: true, Running: d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING}
	for _, a := range d.GetPendingActivities() {
		if a.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED || a.GetState() == enumspb.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED {
			s.Worker = a.GetLastWorkerIdentity()
			var p Progress
			if d := a.GetHeartbeatDetails(); d != nil && converter.GetDefaultDataConverter().FromPayloads(d, &p) == nil {
				s.Phase, s.Event = p.Phase, p.Event
			}
		}
	}
	return s, nil
}

// askAgain is how long Submit and Await wait before they ask a service
// that could not be reached again.
var askAgain = time.Second

// Await waits for workflow id's result, the agent run of node on
// attempt. While the service cannot be reached (restarted, a network
// cut) it keeps asking until ctx ends; the workflow's own failure (its
// activity failed, timed out on a lost heartbeat, or was cancelled) is
// returned as an error that Lost matches, and so is a result that cannot
// be verified with key (Unverified).
func Await(ctx context.Context, c client.Client, id string, key Key, node string, attempt int) (*Output, error) {
	for {
		var signed Signed
		err := c.GetWorkflow(ctx, id, "").Get(ctx, &signed)
		if err == nil {
			out, err := key.OpenOutput(id, node, attempt, &signed)
			var ue *unverifiedError
			if errors.As(err, &ue) {
				ue.worker = takenBy(ctx, c, id)
			}
			return out, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if Lost(err) {
			return nil, err
		}
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil, &lostError{fmt.Errorf("workflow %s: Temporal does not know it", id)}
		}
		if !transient(err) {
			// A result this runner cannot read (a worker of another
			// version), or an error of the service's: no result.
			return nil, &lostError{fmt.Errorf("workflow %s: %w", id, err)}
		}
		// The service is away: ask again.
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(askAgain):
		}
	}
}

// lostError is an iteration whose workflow ended without a result.
type lostError struct{ err error }

func (e *lostError) Error() string { return e.err.Error() }
func (e *lostError) Unwrap() error { return e.err }

// Lost reports whether err is a workflow that ended without a result:
// its activity failed, timed out (a worker that stopped heartbeating) or
// was cancelled, or the workflow was terminated. The iteration was
// interrupted.
func Lost(err error) bool {
	var le *lostError
	var we *temporal.WorkflowExecutionError
	return errors.As(err, &le) || errors.As(err, &we) || Unverified(err)
}

// Cancel asks Temporal to cancel workflow id (its activity is cancelled
// on its worker at its next heartbeat) and waits, until ctx ends, for it
// to be closed. A workflow Temporal does not know, or closed already, is
// no error.
func Cancel(ctx context.Context, c client.Client, id string) error {
	err := c.CancelWorkflow(ctx, id, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil
	}
	if err != nil && !isClosed(err) {
		return fmt.Errorf("cancel %s: %w", id, err)
	}
	for {
		s, err := Describe(ctx, c, id)
		if err == nil && !s.Running {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cancel %s: still running: %w", id, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// isClosed is the error of cancelling a workflow that has closed.
func isClosed(err error) bool {
	var fp *serviceerror.FailedPrecondition
	return errors.As(err, &fp)
}

// Running lists the ids of run's workflows Temporal has running.
func Running(ctx context.Context, c client.Client, run string) ([]string, error) {
	query := fmt.Sprintf("WorkflowId STARTS_WITH '%s' AND ExecutionStatus = 'Running'", workflowPrefix(run))
	var ids []string
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("list the run's workflows: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			ids = append(ids, e.GetExecution().GetWorkflowId())
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return ids, nil
		}
	}
}

// RequestCancel asks Temporal to cancel workflow id, without waiting.
func RequestCancel(ctx context.Context, c client.Client, id string) error {
	err := c.CancelWorkflow(ctx, id, "")
	var nf *serviceerror.NotFound
	if err != nil && !errors.As(err, &nf) && !isClosed(err) {
		return fmt.Errorf("cancel %s: %w", id, err)
	}
	return nil
}

// Why says in a few words why an iteration's workflow ended without a
// result (Lost).
func Why(err error) string {
	var ae *temporal.ApplicationError
	var te *temporal.TimeoutError
	var ce *temporal.CanceledError
	var ue *unverifiedError
	switch {
	case errors.As(err, &ae) && ae.Type() == FailureType:
		return "its worker failed: " + ae.Message()
	case errors.As(err, &ae) && ae.Type() == SetupFailureType:
		return "its worker failed before the agent started: " + ae.Message()
	case errors.As(err, &ae) && ae.Type() == RefusedType:
		return "its worker refused it: " + ae.Message()
	case errors.As(err, &ue):
		return "its result was refused: " + ue.err.Error() + " (forged by another program on the task queue, or sent by a worker with another key)"
	case errors.As(err, &te):
		return "its worker stopped answering (" + strings.ToLower(te.TimeoutType().String()) + " timeout): it was stopped or lost"
	case errors.As(err, &ce):
		return "it was cancelled"
	}
	return "it ended without a result: " + err.Error()
}

// Unanswered reports whether err is an iteration whose worker stopped
// answering (its heartbeat timed out): killed, or cut off.
func Unanswered(err error) bool {
	var te *temporal.TimeoutError
	return errors.As(err, &te)
}

// BeforeAgent reports whether err is a worker's failure before its
// agent started (fetching the checkpoint, making the worktree, reading
// the config): no agent worked, and the task spent no attempt.
func BeforeAgent(err error) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && (ae.Type() == SetupFailureType || ae.Type() == RefusedType)
}

// transient is an error of a call to a service that is away (restarted,
// a network cut) or busy: asking again later may succeed.
func transient(err error) bool {
	var un *serviceerror.Unavailable
	var dl *serviceerror.DeadlineExceeded
	var re *serviceerror.ResourceExhausted
	return errors.As(err, &un) || errors.As(err, &dl) || errors.As(err, &re) || errors.Is(err, context.DeadlineExceeded)
}

// WorkerOf is the worker that had taken an iteration whose workflow
// ended without a result ("": none had, or it is not known).
func WorkerOf(err error) string {
	var ae *temporal.ActivityError
	var ue *unverifiedError
	switch {
	case errors.As(err, &ae):
		return ae.Identity()
	case errors.As(err, &ue):
		return ue.worker
	}
	return ""
}

// takenBy is the identity of the poller that took workflow id's activity,
// as its history says ("" when it cannot be read): who answered, by its
// own account.
func takenBy(ctx context.Context, c client.Client, id string) string {
	who := ""
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return who
		}
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil {
			who = a.GetIdentity()
		}
	}
	return who
}

// Poller is a worker that polled a task queue lately.
type Poller struct {
	Name     string    // its identity: runner worker's --name
	LastPoll time.Time // when it last asked for work
}

// Pollers are the workers that polled queue for iterations lately, as the
// service remembers them (a few minutes).
func Pollers(ctx context.Context, c client.Client, queue string) ([]Poller, error) {
	resp, err := c.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
	if err != nil {
		return nil, fmt.Errorf("describe task queue %s: %w", queue, err)
	}
	var out []Poller
	for _, p := range resp.GetPollers() {
		out = append(out, Poller{Name: p.GetIdentity(), LastPoll: p.GetLastAccessTime().AsTime()})
	}
	return out, nil
}

// ActivityEnded says how workflow id's activity ended, from its history:
// "finished", "failed", "lost (its worker stopped answering)" or
// "cancelled"; "" while it has not ended. A workflow whose activity
// ended stays running until a worker takes that in: its last step runs
// on a worker too.
func ActivityEnded(ctx context.Context, c client.Client, id string) (string, error) {
	how := ""
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return "", err
		}
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			how = "finished"
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
			how = "failed"
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
			how = "lost (its worker stopped answering)"
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
			how = "cancelled"
		}
	}
	return how, nil
}
