package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// startingClient is a client whose ExecuteWorkflow answers with errs in
// turn, then starts the workflow; GetWorkflow finds an existing one.
type startingClient struct {
	client.Client // the rest is not called
	errs          []error
	starts        int
	adopted       string
}

type fakeRun struct {
	client.WorkflowRun
	id string
}

func (r fakeRun) GetID() string { return r.id }

func (c *startingClient) ExecuteWorkflow(ctx context.Context, o client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	c.starts++
	if len(c.errs) > 0 {
		err := c.errs[0]
		c.errs = c.errs[1:]
		return nil, err
	}
	return fakeRun{id: o.ID}, nil
}

func (c *startingClient) GetWorkflow(ctx context.Context, id, runID string) client.WorkflowRun {
	c.adopted = id
	return fakeRun{id: id}
}

// Submit asks again while the service is away, adopts a workflow that an
// earlier ask started (its answer lost), and gives up at once on any
// other error, or when ctx ends.
func TestSubmitWhileTheServiceIsAway(t *testing.T) {
	defer func(d time.Duration) { askAgain = d }(askAgain)
	askAgain = time.Millisecond
	in := Input{Run: "r1", Iteration: 3}
	away := serviceerror.NewUnavailable("connection refused")

	c := &startingClient{errs: []error{away, away}}
	run, err := Submit(context.Background(), c, "q", nil, in)
	if err != nil || run.GetID() != "runner-r1-3" || c.starts != 3 {
		t.Errorf("away twice: run %v, err %v after %d starts; want runner-r1-3 after 3", run, err, c.starts)
	}

	c = &startingClient{errs: []error{away, serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", "")}}
	run, err = Submit(context.Background(), c, "q", nil, in)
	if err != nil || c.adopted != "runner-r1-3" || run.GetID() != "runner-r1-3" {
		t.Errorf("started by a lost ask: run %v, err %v, adopted %q", run, err, c.adopted)
	}

	bad := serviceerror.NewInvalidArgument("bad")
	c = &startingClient{errs: []error{bad}}
	if _, err := Submit(context.Background(), c, "q", nil, in); !errors.Is(err, bad) || c.starts != 1 {
		t.Errorf("invalid: err %v after %d starts, want %v after 1", err, c.starts, bad)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c = &startingClient{errs: []error{away, away, away}}
	if _, err := Submit(ctx, c, "q", nil, in); err == nil || c.starts != 1 {
		t.Errorf("interrupted: err %v after %d starts, want an error after 1", err, c.starts)
	}
}
