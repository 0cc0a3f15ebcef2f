// Package engine runs iterations beyond this machine (SPEC §22): on
// `runner worker` processes anywhere, through a Temporal service.
//
// The coordinator (`runner run` with [engine]) stays the one authority:
// it selects, keeps the ledger, builds and scrubs every prompt, and
// submits one workflow per iteration, its id made of the run and the
// iteration, so that Temporal refuses a second submission of the same
// iteration after a crash. The workflow has one activity, run by a
// worker: it fetches the checkpoint from the git remote both sides
// reach, runs the agent, takes its work as a commit it pushes back, runs
// the guards and the task's checks there, and returns their results and
// the run folder's files. Integration, the guards on the integrated
// result and the run branch stay with the coordinator.
//
// Nothing here schedules, queues or leases: Temporal's task queue places
// the work, the activity's heartbeat is its lease, its timeouts and
// cancellation stop it, and its retries are off (the ledger counts
// attempts).
package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/BurntSushi/toml"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/spend"
	"github.com/runner-cli/runner/internal/state"
)

// Protocol is the version of what the coordinator and the workers
// exchange (Signed, Input, Output, the refs on the remote); it changes
// when a runner of one version could not work with one of the other.
const Protocol = 4

// The names the coordinator and the workers agree on.
const (
	WorkflowName = "runner.Iteration"
	ActivityName = "runner.RunIteration"
)

// Input is what a worker is given to run one iteration.
//
// It travels signed (Signed, SignInput): a worker runs nothing of an
// input it cannot verify.
type Input struct {
	Run       string // the run's id (state/engine.json)
	Iteration int
	Retry     int // 0, or the agent run after a rate limit
	Node      string
	Attempt   int

	// Remote is the git remote both sides reach; Checkpoint the commit
	// the work starts from (the task's checkpoint, or after a rate limit
	// what the agent's runs before left), pushed by the coordinator to
	// CheckpointRef there; ResultRef where the worker pushes the work.
	Remote        string
	Checkpoint    string
	CheckpointRef string
	ResultRef     string

	// Config is the run's config.toml as the coordinator read it;
	// Executor the label of the executor of its chain to run.
	Config   []byte
	Executor string
	// Prompt is the scrubbed prompt pack; Schema the final message's
	// JSON schema.
	Prompt []byte
	Schema []byte
	// Allowance is what the agent may spend (SPEC §24): the worker stops
	// it at the first cap reached, as the coordinator would; nil: no cap.
	// Its run's caps count what the run had spent when it was sent.
	Allowance *spend.Allowance
	// Checks are the task's checks; Baseline what the guards found on
	// the checkpoint (nil: judged by exit status).
	Checks   []state.CheckSpec
	Baseline *state.Baseline
	// Removes are the tests the task's work may remove (its removes).
	Removes []string

	// Timeout bounds the whole activity; Heartbeat how long the worker
	// may be silent.
	Timeout   time.Duration
	Heartbeat time.Duration
}

// Output is what a worker sends back, signed with its key for the
// iteration's workflow, task and attempt.
type Output struct {
	Worker string // its name (--name, default host:pid)
	// Node and Attempt are the input's: the coordinator checks that the
	// output answers for the task and attempt it awaits.
	Node    string
	Attempt int
	// Unconfined says why the worker's agent ran unconfined ("": it was
	// confined); Openings what its room left open, each with why (the
	// layers the worker's machine does not give, sandbox.Layers.Openings),
	// as a local room's are recorded in meta.json.
	Unconfined string
	Openings   []string
	// StartErr is why the agent could not be started (a missing program):
	// no attempt.
	StartErr string
	// Agent is the agent's last run.
	Agent *executor.Result
	// Result is the commit of the work (parent Checkpoint), pushed to
	// ResultRef; "" when the agent could not start.
	Result string
	// Judgement is what the guards and checks said, nil when they did
	// not run (the agent did not say done, or nothing judges the task).
	Judgement *iteration.Judgement
	// Files are the run folder's files (executor.log, events.jsonl,
	// guard.log, failure.log...), each cut to its tail within a bound.
	Files map[string][]byte
}

// Progress is what a worker's heartbeat carries.
type Progress struct {
	Worker string
	Phase  string // "fetching", "agent", "pushing", "guards"
	// Event is the agent's latest event, from the events its CLI
	// streams (live.LatestEvent), or what the worker does ("running the
	// guards").
	Event string
}

// WorkflowID is iteration n's workflow id in run, retry its agent run
// after a rate limit (0 for the first).
func WorkflowID(run string, n, retry int) string {
	id := workflowPrefix(run) + strconv.Itoa(n)
	if retry > 0 {
		id += "-r" + strconv.Itoa(retry)
	}
	return id
}

// workflowPrefix starts the id of every workflow of run.
func workflowPrefix(run string) string { return "runner-" + run + "-" }

// LeftoverRef is where a worker started again in the folder of a killed
// one pushes what the agent of iteration n's agent run retry had left in
// its worktree, as one commit of the checkpoint: the work of an
// interrupted iteration, kept as a local runner keeps it.
func LeftoverRef(run string, n, retry int) string {
	return fmt.Sprintf("refs/runner/engine/%s/%d.%d/leftover", run, n, retry)
}

// RunRefs is the prefix of the refs of run's iterations on the remote.
func RunRefs(run string) string {
	return "refs/runner/engine/" + run + "/"
}

// Refs of iteration n's exchange on the remote, under refs/runner/.
func CheckpointRef(run string, n, retry int) string {
	return fmt.Sprintf("refs/runner/engine/%s/%d.%d/checkpoint", run, n, retry)
}

// ResultRef is where the worker pushes iteration n's work.
func ResultRef(run string, n, retry int) string {
	return fmt.Sprintf("refs/runner/engine/%s/%d.%d/result", run, n, retry)
}

// Workflow is one iteration: one activity on any worker of the task
// queue, with no retry (the ledger counts attempts), its heartbeat the
// lease. A cancelled workflow waits for the activity to stop, so that
// nothing keeps running on the worker. It passes the signed input and
// output through as they are: the activity checks the one, the
// coordinator the other.
func Workflow(ctx workflow.Context, in Signed) (*Signed, error) {
	// The bounds are read before the input is verified: they only bound
	// the activity, which refuses an input it cannot verify at once.
	var bounds struct{ Timeout, Heartbeat time.Duration }
	if err := json.Unmarshal(in.Body, &bounds); err != nil {
		return nil, temporal.NewNonRetryableApplicationError("the iteration's input does not decode: "+err.Error(), RefusedType, err)
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: bounds.Timeout,
		HeartbeatTimeout:    bounds.Heartbeat,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		WaitForCancellation: true,
	})
	var out Signed
	if err := workflow.ExecuteActivity(ctx, ActivityName, in).Get(ctx, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ConfigForWorkers is the run's config.toml as the workers get it: the
// workflow's input, which Temporal keeps in its history and shows in its
// UI. The [[notify]] tables are left out: a webhook's URL is a secret
// (whoever has a Slack or ntfy URL can post to it), and workers never
// notify. The rest is the same settings, written anew (comments go).
func ConfigForWorkers(text []byte) ([]byte, error) {
	var m map[string]any
	if _, err := toml.Decode(string(text), &m); err != nil {
		return nil, err
	}
	if _, ok := m["notify"]; !ok {
		return text, nil
	}
	delete(m, "notify")
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(m); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
