package state

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/strictjson"
)

// Outcomes of an iteration, as recorded in meta.json and the journal.
const (
	OutcomeDone          = "done"           // agent said done, guards passed
	OutcomeGuardFailed   = "guard_failed"   // agent said done, a guard failed
	OutcomeRetry         = "retry"          // agent asked for another attempt
	OutcomeBlocked       = "blocked"        // agent said it cannot go on
	OutcomeDecomposed    = "decomposed"     // agent split the node
	OutcomeExecutorError = "executor_error" // agent failed, timed out, or gave no valid message
	OutcomeInterrupted   = "interrupted"    // the runner stopped mid-iteration
	OutcomeRejected      = "rejected"       // agent said done, guards passed, the reviewer rejected it
	// OutcomeCostCap: the runner stopped the agent (or the reviewer) at a
	// spend cap (SPEC §24); the attempt is charged and its work kept as
	// an interrupted attempt's.
	OutcomeCostCap = "cost_cap"
)

// Review verdicts (ReviewMeta.Verdict).
const (
	VerdictApprove = "approve"
	VerdictReject  = "reject"
	// VerdictSkipped: the reviewer failed and review.on_error = "accept"
	// took the task as done without a verdict.
	VerdictSkipped = "skipped"
)

// Outcomes of a planning run (`runner plan`, SPEC §16).
const (
	OutcomePlanWritten     = "plan_written"     // the plan was written to tree.json
	OutcomePlanDryRun      = "plan_dry_run"     // --dry-run: valid, shown, not written
	OutcomePlanInvalid     = "plan_invalid"     // the plan does not validate as a tree
	OutcomePlanRefused     = "plan_refused"     // valid, but writing it would lose something
	OutcomePlanBlocked     = "plan_blocked"     // the agent answered that it cannot plan
	OutcomePlanFailed      = "plan_failed"      // the agent failed or gave no valid message
	OutcomePlanInterrupted = "plan_interrupted" // the runner was stopped
)

// Meta is runs/NNNNNN/meta.json: everything about one iteration.
type Meta struct {
	Iteration   int    `json:"iteration"`
	Node        string `json:"node"`
	NodePath    string `json:"node_path"`
	Attempt     int    `json:"attempt"`
	MaxAttempts int    `json:"max_attempts"`
	Phase       string `json:"phase"`
	// Slot is the parallel slot it worked in (SPEC §14), 0 without.
	Slot int `json:"slot,omitempty"`
	// Worker is the `runner worker` the iteration ran on, with [engine]
	// (SPEC §22).
	Worker string `json:"worker,omitempty"`
	// Refused says why the coordinator refused what came back from a
	// worker: a result it could not verify with the engine key (SPEC
	// §22). The iteration is lost, neither done nor charged.
	Refused     string      `json:"refused,omitempty"`
	StartedAt   time.Time   `json:"started_at"`
	FinishedAt  *time.Time  `json:"finished_at,omitempty"`
	DurationMS  int64       `json:"duration_ms"`
	Prompt      PromptMeta  `json:"prompt"`
	Agent       *AgentMeta  `json:"agent,omitempty"`
	AgentStatus string      `json:"agent_status,omitempty"`
	Summary     string      `json:"summary,omitempty"`
	Guards      []GuardMeta `json:"guards,omitempty"`
	Guard       string      `json:"guard,omitempty"`
	// Checks are the results of the task's own checks, and of a parent's
	// when this task was its last open leaf (SPEC §18).
	Checks []GuardMeta `json:"checks,omitempty"`
	// Unconfined says why the agent, the guards and the reviewer of the
	// iteration were not confined to their worktree (SPEC §19); "" when
	// they were.
	Unconfined string `json:"unconfined,omitempty"`
	// Openings are what the room of a confined iteration left open,
	// each with why (SPEC §19: a layer the machine did not give); none
	// when every layer stood.
	Openings []string `json:"openings,omitempty"`
	// CheckSpecs are the checks that judge the task, as the tree had them
	// before its agent started (SPEC §18): what the agent does to the
	// tree meanwhile changes nothing of them.
	CheckSpecs []CheckSpec `json:"check_specs,omitempty"`
	// Removes are the tests the task's work may remove (the node's
	// removes and its ancestors'), as the tree had them before its agent
	// started: a test that passed on the baseline and vanished is a
	// regression unless it is one of them (SPEC §18).
	Removes []string `json:"removes,omitempty"`
	// Vacuous names the task's checks that passed on the untouched
	// checkpoint before its first attempt: they prove nothing.
	Vacuous []string `json:"vacuous,omitempty"`
	// ChecksBefore tallies the tests of the task's own checks on the
	// untouched checkpoint, before its first attempt; nil without a
	// report (or after the first attempt).
	ChecksBefore *TestTally `json:"checks_before,omitempty"`
	// Baseline is the key of the baseline the guards were judged against
	// ("" without one: judged by their exit status).
	Baseline   string `json:"baseline,omitempty"`
	Outcome    string `json:"outcome,omitempty"`
	NodeStatus string `json:"node_status,omitempty"`
	Attempts   int    `json:"attempts"`
	Note       string `json:"note,omitempty"`
	// NoAttempt says an interrupted iteration spent no attempt: the runner
	// died while its agent worked, and the task was not also at work at
	// the runner's previous death (RunState.Deaths).
	NoAttempt bool `json:"no_attempt,omitempty"`
	// RunnerDied is the pid of the runner that died while the agent of
	// this interrupted iteration worked: a runner that resumes the
	// iteration from its recorded meta.json notes that death again
	// (RunState.Death), so that a death is never forgotten.
	RunnerDied int `json:"runner_died,omitempty"`
	// RunnerDiedLife is that runner's Life.
	RunnerDiedLife string `json:"runner_died_life,omitempty"`
	// Usage sums what every agent run of the iteration reported (a run
	// retried after a rate limit included); nil when nothing was reported.
	Usage *Usage `json:"usage,omitempty"`
	// Rung is the rung of the ladder of executors (loop.escalate, the
	// node's executors) the attempt was given to; nil without a ladder.
	Rung *RungMeta `json:"rung,omitempty"`
	// CostCap is the spend cap at which the runner stopped the agent or
	// the reviewer, with the figures (SPEC §24); the outcome is then
	// cost_cap.
	CostCap *CapHit `json:"cost_cap,omitempty"`
	// Checkpoint is the commit a finished task made on the run branch
	// (SPEC §12); AttemptRef the ref keeping a failed attempt's changes.
	Checkpoint *CheckpointMeta `json:"checkpoint,omitempty"`
	AttemptRef string          `json:"attempt_ref,omitempty"`
	// NoChange says the agent said done and its work changed nothing in
	// the working tree (git checkpoints): an anomaly, or with
	// verify.empty_done = "fail" a failed attempt.
	NoChange bool `json:"no_change,omitempty"`
	// CommandsFailed says the agent said done and every command it ran
	// failed (from the events its CLI streamed): an anomaly too.
	CommandsFailed bool `json:"commands_failed,omitempty"`
	// Hidden names what was outside the judged tree, made or changed
	// while the task was worked on, and hidden from its guards (SPEC §18:
	// an ignored file, a repository of its own), at most
	// MaxRegressedNames of them; HiddenMore counts the rest.
	Hidden     []string `json:"hidden,omitempty"`
	HiddenMore int      `json:"hidden_more,omitempty"`
	// JudgedTree is the git tree the agent's work was taken as before the
	// guards judged it (SPEC §20): what lands when they pass, whatever
	// the working tree holds after them.
	JudgedTree string `json:"judged_tree,omitempty"`
	// Executor is the name of the executor that ran the agent (SPEC §17).
	Executor string `json:"executor,omitempty"`
	// Tamper lists the runner's inputs and protected paths the agent
	// changed; each was reverted and kept (SPEC §13). Its presence fails
	// the attempt.
	Tamper []TamperMeta `json:"tamper,omitempty"`
	// Review is the reviewer's verdict on work the guards passed (SPEC §17).
	Review *ReviewMeta `json:"review,omitempty"`
	// Conflict is what happened when the task's commit did not integrate
	// onto the run branch (SPEC §14).
	Conflict *ConflictMeta `json:"conflict,omitempty"`
	// Plan is what a planning run made of the agent's answer; nil for the
	// loop's iterations.
	Plan *PlanMeta `json:"plan,omitempty"`
	// Message is the agent's final message, as in output.json: meta.json
	// is made durable before the outcome is applied, so a runner that
	// records the iteration after a crash reads the message from here.
	Message json.RawMessage `json:"message,omitempty"`
}

// PlanMeta is a planning run's record (`runner plan`, SPEC §16).
type PlanMeta struct {
	// Node is the task decomposed (--node); "" for a plan of the whole
	// tree.
	Node string `json:"node,omitempty"`
	// Documents are those the prompt carried, as named on the command
	// line ("stdin" for -).
	Documents []PlanDocument `json:"documents,omitempty"`
	Force     bool           `json:"force,omitempty"`
	DryRun    bool           `json:"dry_run,omitempty"`
	// Tasks counts the nodes the plan adds.
	Tasks int `json:"tasks,omitempty"`
	// Problems say why the plan was invalid or refused, one per line.
	Problems []string `json:"problems,omitempty"`
	// Proposal is the tree the plan makes, as it would be written
	// (relative to the run folder); Backup the copy of the tree it
	// replaced (relative to the repository root).
	Proposal string `json:"proposal,omitempty"`
	Backup   string `json:"backup,omitempty"`
}

// PlanDocument is one document of a planning prompt.
type PlanDocument struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
}

// CheckpointMeta is a task's commit on the run branch.
type CheckpointMeta struct {
	Commit   string `json:"commit"`
	Parent   string `json:"parent"` // the checkpoint it was made on
	Branch   string `json:"branch"`
	Diffstat string `json:"diffstat,omitempty"`
}

// EmptyDoneGuard names the failed result of an attempt whose done was
// empty (verify.empty_done = "fail"; NoChange, CommandsFailed).
const EmptyDoneGuard = "empty done"

// TamperMeta is one judged path the agent changed.
type TamperMeta struct {
	Path   string `json:"path"`   // relative to the repository root
	Change string `json:"change"` // "modified", "deleted" or "added"
	// Kept is where the agent's version is kept, relative to the run
	// folder (empty for a deletion).
	Kept string `json:"kept,omitempty"`
}

// ReviewMeta is a reviewer's answer on one iteration.
type ReviewMeta struct {
	Verdict  string   `json:"verdict"` // "approve", "reject" or "skipped"
	Reasons  []string `json:"reasons,omitempty"`
	Executor string   `json:"executor,omitempty"`
	Usage    *Usage   `json:"usage,omitempty"`
	Error    string   `json:"error,omitempty"`
	// Rejection numbers a rejection among the task's (1 for its first
	// since it was last reset); review.max_rejections blocks the task.
	Rejection int `json:"rejection,omitempty"`
	// Asked counts the reviewer's runs for this verdict; Failures lists
	// why the runs before the last one gave none.
	Asked    int      `json:"asked,omitempty"`
	Failures []string `json:"failures,omitempty"`
	// Kept is where what a reviewer changed in the working tree is kept
	// (a ref, or a folder of the run) after it was reverted.
	Kept string `json:"kept,omitempty"`
}

// ConflictMeta is a failed integration of a task's commit.
type ConflictMeta struct {
	Kind  string   `json:"kind"` // "conflict" or "guards"
	Files []string `json:"files,omitempty"`
	Onto  string   `json:"onto,omitempty"` // the checkpoint it was tried on
}

// PromptMeta summarises the prompt sent.
type PromptMeta struct {
	Bytes   int      `json:"bytes"`
	Budget  int      `json:"budget"`
	Dropped []string `json:"dropped,omitempty"`
}

// AgentMeta is what the executor did.
type AgentMeta struct {
	Argv          []string `json:"argv"`
	ExitCode      int      `json:"exit_code"`
	Class         string   `json:"class"`
	DurationMS    int64    `json:"duration_ms"`
	Error         string   `json:"error,omitempty"`
	MessageSource string   `json:"message_source,omitempty"`
	MessageError  string   `json:"message_error,omitempty"`
	LogTail       string   `json:"log_tail,omitempty"`

	// Evidence is what the classification rests on when the class is not
	// ok: the Codex error event, the Claude result subtype, or the
	// matching line the agent printed.
	Evidence string `json:"evidence,omitempty"`
	// Failed is set when the agent itself failed (a non-zero exit, an
	// error it reported, a timeout): what loop.max_consecutive_errors
	// counts.
	Failed bool `json:"failed,omitempty"`
	// PermissionDenials are the tool calls the agent was refused (Claude's
	// permission_denials, Codex's declined commands).
	PermissionDenials []PermissionDenial `json:"permission_denials,omitempty"`
	// RateLimits lists the runs of this iteration that hit a usage or rate
	// limit and were retried after a wait, oldest first.
	RateLimits []RateLimitMeta `json:"rate_limits,omitempty"`
	// Recovered is set when the run was read back from the files the agent
	// left (a runner stopped after the agent finished and before it saved
	// the run): its exit status is unknown.
	Recovered bool `json:"recovered,omitempty"`
}

// PermissionDenial is one tool call the agent was refused.
type PermissionDenial struct {
	Tool  string `json:"tool"`
	Input string `json:"input,omitempty"` // the call's input, shortened
}

// RateLimitMeta is one agent run that hit a usage or rate limit.
type RateLimitMeta struct {
	At       time.Time  `json:"at"`
	ExitCode int        `json:"exit_code"`
	Evidence string     `json:"evidence"`
	ResetAt  *time.Time `json:"reset_at,omitempty"` // when the agent said the limit resets
	WaitMS   int64      `json:"wait_ms"`            // the wait that followed
}

// GuardMeta is one guard's result.
type GuardMeta struct {
	Name       string `json:"name"`
	ExitCode   int    `json:"exit_code"`
	DurationMS int64  `json:"duration_ms"`
	Status     string `json:"status"`
	Error      string `json:"error,omitempty"`
	// Node is, for a check, the node that carries it.
	Node string `json:"node,omitempty"`
	// Report is the test report's format; Tests, Failed and Skipped
	// count its tests when it was read (the others passed), Broken names
	// its units whose tests could not run ("example.com/x: build
	// failed"); ReportError says why it was not read.
	Report      string   `json:"report,omitempty"`
	Tests       int      `json:"tests,omitempty"`
	Failed      int      `json:"failed,omitempty"`
	Skipped     int      `json:"skipped,omitempty"`
	Broken      []string `json:"broken,omitempty"`
	ReportError string   `json:"report_error,omitempty"`
	// BaselinePassed counts the tests that passed on the baseline it was
	// judged against; nil without one.
	BaselinePassed *int `json:"baseline_passed,omitempty"`
	// What fails the guard against its baseline (SPEC §18), each list at
	// most MaxRegressedNames names (the run folder holds the rest):
	// Regressed, tests that passed on the baseline and fail now;
	// NewFailing, tests that fail and did not fail or pass there (new, or
	// skipped there); Vanished, tests that passed there and are absent
	// from the report or skipped now, and that the task does not remove;
	// NewBroken, units whose tests could not run ("unit: reason") that
	// were not broken there.
	Regressed  []string `json:"regressed,omitempty"`
	NewFailing []string `json:"new_failing,omitempty"`
	Vanished   []string `json:"vanished,omitempty"`
	NewBroken  []string `json:"new_broken,omitempty"`
	// Note says how the verdict was reached when not by the exit status
	// alone ("exit 1: 3 tests fail as before, none regressed").
	Note string `json:"note,omitempty"`
}

// CheckSpec is a check that judges a task: the node carrying it and its
// keys as tree.json has them.
type CheckSpec struct {
	Node        string `json:"node"`
	Name        string `json:"name"`
	Run         string `json:"run"`
	Timeout     string `json:"timeout,omitempty"`
	OutputLimit string `json:"output_limit,omitempty"`
	Report      string `json:"report,omitempty"`
}

// MaxRegressedNames bounds GuardMeta.Regressed.
const MaxRegressedNames = 50

// MetaFile is the meta.json path inside a run folder.
func MetaFile(runDir string) string { return runDir + string(os.PathSeparator) + "meta.json" }

// SaveMeta writes meta.json atomically and durably (the run folder itself
// is not fsynced in runs/: see SyncDir).
func SaveMeta(runDir string, m *Meta) error { return SaveMetaAs(runDir, m, fsutil.Durable) }

// SaveMetaAs writes meta.json atomically, as durably as d says.
func SaveMetaAs(runDir string, m *Meta, d fsutil.Durability) error {
	return fsutil.ReplaceJSON(MetaFile(runDir), m, d)
}

// LoadMeta reads a run folder's meta.json.
func LoadMeta(runDir string) (*Meta, error) {
	path := MetaFile(runDir)
	data, err := fsutil.ReadLimited(path, maxStateFile, true)
	if err != nil {
		return nil, err
	}
	var m Meta
	if err := strictjson.Decode(data, &m, 32); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return &m, nil
}

// LatestRun returns the highest iteration number that has a run folder,
// or 0, like LastRun, without listing runs/ when the run state says where
// to look: from its last or in-flight iteration it probes the folders
// above for any it does not know. It lists runs/ only when that folder is
// missing or the run state does not load.
func LatestRun(p Paths) (int, error) {
	rs, err := LoadRunState(p.RunState())
	if err != nil {
		return LastRun(p)
	}
	n := rs.LastKnown()
	if n == 0 {
		return LastRun(p)
	}
	if st, err := os.Stat(p.RunDir(n)); err != nil || !st.IsDir() {
		return LastRun(p)
	}
	for {
		st, err := os.Stat(p.RunDir(n + 1))
		if err != nil || !st.IsDir() {
			return n, nil
		}
		n++
	}
}

// LastRun returns the highest iteration number that has a run folder, or 0.
func LastRun(p Paths) (int, error) {
	entries, err := fsutil.ReadDir(p.RunsDir())
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	last := 0
	for _, e := range entries {
		var n int
		if _, err := fmt.Sscanf(e.Name(), "%06d", &n); err == nil && e.IsDir() && RunName(n) == e.Name() && n > last {
			last = n
		}
	}
	return last, nil
}

// VerdictDigest is a digest of what decides an iteration's outcome once
// its guards ran: the agent's status and message, the guards' results and
// what the agent changed of its judges. The journal's guards_done record
// keeps it, so that a meta.json rewritten afterwards (by an agent, before
// killing the runner) is not recorded as a result on resume.
func VerdictDigest(m *Meta) string {
	v := struct {
		Iteration   int             `json:"iteration"`
		Node        string          `json:"node"`
		AgentStatus string          `json:"agent_status"`
		Guard       string          `json:"guard"`
		Guards      []GuardMeta     `json:"guards"`
		Tamper      []TamperMeta    `json:"tamper"`
		Message     json.RawMessage `json:"message"`
	}{m.Iteration, m.Node, m.AgentStatus, m.Guard, m.Guards, m.Tamper, m.Message}
	data, _ := json.Marshal(v)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}
