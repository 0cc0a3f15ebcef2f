package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/runner-cli/runner/internal/config"
	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/sandbox"
)

// discardLogger drops the SDK's log.
func discardLogger() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// newEnv is a test environment of the SDK with the workflow registered
// and act as its activity.
func newEnv(t *testing.T, act func(context.Context, Signed) (*Signed, error)) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(discardLogger())
	env := s.NewTestWorkflowEnvironment()
	env.SetIdentity("w-test")
	env.RegisterActivityWithOptions(act, activity.RegisterOptions{Name: ActivityName})
	return env
}

func input() Signed {
	s, err := testKey.SignInput(Input{Run: "r1", Iteration: 7, Node: "a", Timeout: time.Minute, Heartbeat: 10 * time.Second})
	if err != nil {
		panic(err)
	}
	return *s
}

// testKey is a key for the tests.
var testKey = Key("0123456789abcdef0123456789abcdef-test")

// The workflow hands the worker's signed output back as it is, and the
// coordinator opens it with the key.
func TestWorkflowReturnsTheWorkersOutput(t *testing.T) {
	env := newEnv(t, func(ctx context.Context, s Signed) (*Signed, error) {
		in, err := testKey.OpenInput("runner-r1-7", &s)
		if err != nil {
			return nil, err
		}
		return testKey.signOutput("runner-r1-7", in, &Output{Worker: "w1", Result: "abc", Agent: &executor.Result{Class: executor.ClassOK}})
	})
	env.ExecuteWorkflow(Workflow, input())
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, error %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var signed Signed
	if err := env.GetWorkflowResult(&signed); err != nil {
		t.Fatal(err)
	}
	out, err := testKey.OpenOutput("runner-r1-7", "a", 0, &signed)
	if err != nil {
		t.Fatal(err)
	}
	if out.Worker != "w1" || out.Result != "abc" || out.Agent.Class != executor.ClassOK {
		t.Errorf("output %+v", out)
	}
}

// A failed activity is not tried again: the ledger counts attempts.
func TestWorkflowNeverRetries(t *testing.T) {
	calls := 0
	env := newEnv(t, func(ctx context.Context, in Signed) (*Signed, error) {
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
	env := newEnv(t, func(ctx context.Context, in Signed) (*Signed, error) {
		calls++
		return nil, temporal.NewHeartbeatTimeoutError()
	})
	env.ExecuteWorkflow(Workflow, input())
	err := env.GetWorkflowError()
	if err == nil || !Lost(err) {
		t.Fatalf("workflow error %v, want a lost iteration", err)
	}
	if why := Why(err); !strings.Contains(why, "stopped answering") || !Unanswered(err) || BeforeAgent(err) {
		t.Errorf("Why = %q, Unanswered %v, BeforeAgent %v", why, Unanswered(err), BeforeAgent(err))
	}
	if w := WorkerOf(err); w != "w-test" {
		t.Errorf("WorkerOf = %q, want the worker that had it, w-test", w)
	}
	if calls != 1 {
		t.Errorf("the activity ran %d times, want once", calls)
	}
}

// A cancelled workflow ends without a result. (That the activity is
// then cancelled on its worker, and its agent stopped, is
// TestEngineWorkers' Ctrl-C, against a real service.)
func TestWorkflowCancelled(t *testing.T) {
	env := newEnv(t, func(ctx context.Context, in Signed) (*Signed, error) {
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

// The worker's own failure says so, with its message.
func TestWorkflowWorkerFailure(t *testing.T) {
	env := newEnv(t, func(ctx context.Context, in Signed) (*Signed, error) {
		return nil, temporal.NewNonRetryableApplicationError("git fetch: no such remote", FailureType, errors.New("exit 128"))
	})
	env.ExecuteWorkflow(Workflow, input())
	err := env.GetWorkflowError()
	if why := Why(err); !Lost(err) || BeforeAgent(err) || why != "its worker failed: git fetch: no such remote" {
		t.Errorf("Lost %v, BeforeAgent %v, Why %q", Lost(err), BeforeAgent(err), why)
	}
}

// A worker's failure before its agent started says so: the task spent no
// attempt on it.
func TestWorkflowSetupFailure(t *testing.T) {
	env := newEnv(t, func(ctx context.Context, in Signed) (*Signed, error) {
		return nil, temporal.NewNonRetryableApplicationError("fetch from /r.git: exit 128", SetupFailureType, errors.New("exit 128"))
	})
	env.ExecuteWorkflow(Workflow, input())
	err := env.GetWorkflowError()
	if why := Why(err); !Lost(err) || !BeforeAgent(err) || why != "its worker failed before the agent started: fetch from /r.git: exit 128" {
		t.Errorf("Lost %v, BeforeAgent %v, Why %q", Lost(err), BeforeAgent(err), why)
	}
}

// git runs git in dir for a test.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// The work is pushed as a commit of the checkpoint; work that changed
// nothing is the checkpoint itself, pushed as the result all the same.
func TestPushWork(t *testing.T) {
	ctx := context.Background()
	src, remote, checkpoint := checkpointRepo(t)
	gitIn(t, src, "push", "-q", remote, "HEAD:refs/runner/engine/r/1.0/checkpoint")

	w := &Worker{Dir: t.TempDir(), Name: "w", Room: unconfined}
	var err error
	if w.repo, err = git.Init(ctx, filepath.Join(w.Dir, "repo"), git.Options{}); err != nil {
		t.Fatal(err)
	}
	for i, change := range []bool{false, true} {
		in := Input{Run: "r", Iteration: 1 + i, Node: "a", Remote: remote, Checkpoint: checkpoint,
			CheckpointRef: "refs/runner/engine/r/1.0/checkpoint", ResultRef: ResultRef("r", 1+i, 0)}
		it := &iterationRun{in: in, cfg: &config.Config{}, phase: func(string) {}}
		if err := w.checkout(ctx, fmt.Sprint("wf-", i), it); err != nil {
			t.Fatal(err)
		}
		if change {
			os.WriteFile(filepath.Join(it.work, "b.txt"), []byte("b\n"), 0o644)
		}
		got, err := w.pushWork(ctx, it)
		if err != nil {
			t.Fatal(err)
		}
		onRemote := gitIn(t, remote, "rev-parse", in.ResultRef)
		switch {
		case onRemote != got:
			t.Errorf("change %v: pushed %s, the remote has %s", change, got, onRemote)
		case !change && got != checkpoint:
			t.Errorf("no change: result %s, want the checkpoint %s", got, checkpoint)
		case change && gitIn(t, remote, "rev-parse", got+"^") != checkpoint:
			t.Errorf("the work %s is not a commit of the checkpoint", got)
		case change && gitIn(t, remote, "show", got+":b.txt") != "b":
			t.Errorf("the work's b.txt is not on the remote")
		}
		w.tidy("wf", it)
	}
}

func TestTransient(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{serviceerror.NewUnavailable("connection refused"), true},
		{serviceerror.NewDeadlineExceeded("long poll"), true},
		{fmt.Errorf("get: %w", context.DeadlineExceeded), true},
		{serviceerror.NewInvalidArgument("bad"), false},
		{fmt.Errorf("payload: %w", converter.ErrUnableToDecode), false},
	} {
		if got := transient(c.err); got != c.want {
			t.Errorf("transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// The config the workers get is the run's, less its webhooks.
func TestConfigForWorkers(t *testing.T) {
	example, err := os.ReadFile("../../.runner.example/config.toml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(example) + `
[[guard]]
name = "lint"
run = "go vet ./..."
timeout = "10m"

[[notify]]
url = "https://hooks.slack.com/services/T000/B000/secretsecretsecret"
events = ["blocked"]
`
	want, err := config.Parse("config.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Notify) != 1 {
		t.Fatalf("the test's config has %d webhooks", len(want.Notify))
	}
	sent, err := ConfigForWorkers([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sent), "hooks.slack.com") {
		t.Errorf("the webhook's URL is sent to the workers:\n%s", sent)
	}
	got, err := config.Parse("config.toml (sent)", sent)
	if err != nil {
		t.Fatalf("the config sent does not parse: %v\n%s", err, sent)
	}
	want.Notify = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the config sent differs beyond its webhooks:\n got %+v\nwant %+v", got, want)
	}
	if plain, _ := ConfigForWorkers(example); string(plain) != string(example) {
		t.Error("a config without webhooks is not sent as it is")
	}
}

// A worker refuses the iteration of a coordinator that speaks another
// protocol, before anything else.
func TestProtocolMismatch(t *testing.T) {
	s := input()
	s.Protocol = Protocol + 1
	_, err := testKey.OpenInput("runner-r1-7", &s)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("protocol %d, this side %d", Protocol+1, Protocol)) {
		t.Errorf("another protocol: %v", err)
	}
}

// unconfined is a worker's Room where these tests confine nothing.
func unconfined(*config.Config, string, string) *sandbox.Room { return nil }
