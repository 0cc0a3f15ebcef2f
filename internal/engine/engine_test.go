package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	executor "github.com/runner-cli/runner/internal/exec"
)

// newEnv is a test environment of the SDK with the workflow registered
// and act as its activity.
func newEnv(t *testing.T, act func(context.Context, Input) (*Output, error)) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(discardLogger())
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivityWithOptions(act, activity.RegisterOptions{Name: ActivityName})
	return env
}

func input() Input {
	return Input{Run: "r1", Iteration: 7, Node: "a", Timeout: time.Minute, Heartbeat: 10 * time.Second}
}

func TestWorkflowReturnsTheWorkersOutput(t *testing.T) {
	env := newEnv(t, func(ctx context.Context, in Input) (*Output, error) {
		return &Output{Worker: "w1", Result: "abc", Agent: &executor.Result{Class: executor.ClassOK}}, nil
	})
	env.ExecuteWorkflow(Workflow, input())
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var out Output
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if out.Worker != "w1" || out.Result != "abc" || out.Agent.Class != executor.ClassOK {
		t.Errorf("output %+v", out)
	}
}

// A failed activity is not tried again: the ledger counts attempts.
func TestWorkflowNeverRetries(t *testing.T) {
	calls := 0
	env := newEnv(t, func(ctx context.Context, in Input) (*Output, error) {
		calls++
		return nil, errors.New("the worker's disk is full")
	})
	env.ExecuteWorkflow(Workflow, input())
	err := env.GetWorkflowError()
	if err == nil {
		t.Fatal("the workflow succeeded")
	}
	if calls != 1 {
		t.Errorf("the activity ran %d times, want once", calls)
	}
	if !Lost(err) {
		t.Errorf("Lost(%v) = false: an iteration whose activity failed has no result", err)
	}
}

// A worker that stops heartbeating loses its iteration: the activity
// times out, once.
func TestWorkflowLostHeartbeat(t *testing.T) {
	calls := 0
	env := newEnv(t, func(ctx context.Context, in Input) (*Output, error) {
		calls++
		return nil, temporal.NewHeartbeatTimeoutError()
	})
	env.ExecuteWorkflow(Workflow, input())
	err := env.GetWorkflowError()
	if err == nil || !Lost(err) {
		t.Fatalf("workflow error %v, want a lost iteration", err)
	}
	if calls != 1 {
		t.Errorf("the activity ran %d times, want once", calls)
	}
}

// A cancelled workflow ends without a result. (That the activity is
// then cancelled on its worker, and its agent stopped, is
// TestEngineWorkers' Ctrl-C, against a real service.)
func TestWorkflowCancelled(t *testing.T) {
	env := newEnv(t, func(ctx context.Context, in Input) (*Output, error) {
		for {
			activity.RecordHeartbeat(ctx, Progress{Phase: "agent"})
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Second)
	env.ExecuteWorkflow(Workflow, input())
	if err := env.GetWorkflowError(); err == nil || !Lost(err) {
		t.Fatalf("workflow error %v, want a cancelled iteration", err)
	}
}

func TestWorkflowIDs(t *testing.T) {
	if got := WorkflowID("r1", 7, 0); got != "runner-r1-7" {
		t.Errorf("WorkflowID = %q", got)
	}
	if got := WorkflowID("r1", 7, 2); got != "runner-r1-7-r2" {
		t.Errorf("WorkflowID retry = %q", got)
	}
	if CheckpointRef("r1", 7, 0) == ResultRef("r1", 7, 0) || !strings.HasPrefix(ResultRef("r1", 7, 1), "refs/runner/") {
		t.Errorf("refs %s %s", CheckpointRef("r1", 7, 0), ResultRef("r1", 7, 1))
	}
}

// The run folder's files go back whole when small, cut to their tail
// (saying so) when large, and within the total bound.
func TestCollectFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, size int) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(strings.Repeat("x", size-1)+"\n"), 0o644)
	}
	write("prompt.md", 10)
	write("executor.log", 100)
	write("events.jsonl", fileLimit*2)
	write("tamper/tests/a_test.go", 50)
	for i := range 10 {
		write("checks/"+string(rune('a'+i))+".log", fileLimit)
	}
	files := collectFiles(dir)
	if _, ok := files["prompt.md"]; ok {
		t.Error("prompt.md sent back: it is the coordinator's")
	}
	if len(files["executor.log"]) != 100 || len(files["tamper/tests/a_test.go"]) != 50 {
		t.Errorf("small files not whole: %d %d", len(files["executor.log"]), len(files["tamper/tests/a_test.go"]))
	}
	ev := files["events.jsonl"]
	if !strings.HasPrefix(string(ev), "[runner worker: the first") || len(ev) > fileLimit+100 {
		t.Errorf("events.jsonl: %d bytes, starting %q", len(ev), string(ev[:min(60, len(ev))]))
	}
	total := 0
	for _, b := range files {
		total += len(b)
	}
	if total > filesLimit+20*100 {
		t.Errorf("%d bytes sent back, above %d", total, filesLimit)
	}
}
