package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
)

// Journal events.
const (
	EventStarted     = "started"
	EventAgentDone   = "agent_done"
	EventGuardsDone  = "guards_done"
	EventRecorded    = "recorded"
	EventInterrupted = "interrupted"
	EventReset       = "reset"
	EventAborted     = "aborted" // the agent could not be started; no attempt spent
	// EventRateLimited: an agent run hit a usage or rate limit; the runner
	// waits and runs the agent again without spending an attempt.
	EventRateLimited = "rate_limited"
	// EventSkipped: `runner skip NODE` marked a task done without running
	// it (SPEC §13).
	EventSkipped = "skipped"
	// EventAnswered: `runner answer NODE TEXT` recorded a person's answer
	// to a task's question and reopened it (SPEC §21); Summary holds the
	// answer.
	EventAnswered = "answered"
	// EventTamper: the agent changed a file that judges it (the runner's
	// inputs or a verify.protect path); the change was reverted and kept
	// (SPEC §13). Paths lists them.
	EventTamper = "tamper"
	// EventRejected: the reviewer rejected a task its guards passed (SPEC §17).
	EventRejected = "rejected"
	// EventReviewed: the reviewer's verdict is durable (phase reviewed);
	// Verdict says which.
	EventReviewed = "reviewed"
	// EventReviewFailed: a reviewer's run gave no verdict (an error, a
	// timeout, a rate limit, a change to the work); it is asked again.
	EventReviewFailed = "review_failed"
	// EventExecutorSetAside: an executor of the chain was set aside for
	// the rest of the run (Executor names it, Error says why).
	EventExecutorSetAside = "executor_set_aside"
	// EventConflict: a finished task's commit did not integrate onto the
	// run branch (SPEC §14).
	EventConflict = "conflict"
	// EventRunStarted: a `runner run` began, once its inputs loaded
	// (RunnerPID). `runner report` reports a run from it to the next.
	EventRunStarted = "run_started"
	// EventRefused: the coordinator refused a worker's result it could
	// not verify with the engine key (SPEC §22): forged, or signed with
	// another key. The iteration is lost, no attempt spent; Error says
	// why.
	EventRefused = "refused"
	// EventPlan: `runner plan` ran the agent to plan the tree, or to
	// decompose one task, outside the loop's iterations (SPEC §16); the
	// record's outcome is one of the OutcomePlan values.
	EventPlan = "plan"
)

// Record is one line of journal.jsonl.
type Record struct {
	Time        time.Time `json:"time"`
	Iteration   int       `json:"iteration,omitempty"`
	Node        string    `json:"node,omitempty"`
	Slot        int       `json:"slot,omitempty"` // the parallel slot (SPEC §14)
	Event       string    `json:"event"`
	Phase       string    `json:"phase,omitempty"`
	AgentClass  string    `json:"agent_class,omitempty"`
	AgentStatus string    `json:"agent_status,omitempty"`
	Guard       string    `json:"guard,omitempty"`
	Outcome     string    `json:"outcome,omitempty"`
	NodeStatus  string    `json:"node_status,omitempty"`
	Attempts    int       `json:"attempts,omitempty"`
	NoAttempt   bool      `json:"no_attempt,omitempty"` // an interruption that spent no attempt (Meta.NoAttempt)
	Summary     string    `json:"summary,omitempty"`
	Error       string    `json:"error,omitempty"`
	Evidence    string    `json:"evidence,omitempty"`
	Usage       *Usage    `json:"usage,omitempty"`
	WaitMS      int64     `json:"wait_ms,omitempty"`
	// RunnerPID is the runner that started the iteration (started records).
	RunnerPID int `json:"runner_pid,omitempty"`
	// RunnerLife is that runner's Life, which its pid alone does not
	// tell (started records).
	RunnerLife string `json:"runner_life,omitempty"`
	// Executor names the executor that ran the iteration (SPEC §17), or
	// the reviewer in a review's records.
	Executor string `json:"executor,omitempty"`
	// Rung is the rung of the ladder of executors the attempt was given
	// to (Meta.Rung.N), in recorded records; 0 without a ladder.
	Rung int `json:"rung,omitempty"`
	// CostCap is the spend cap that stopped the iteration's agent or
	// reviewer, in recorded records of outcome cost_cap.
	CostCap *CapHit `json:"cost_cap,omitempty"`
	// Verdict is the reviewer's, in reviewed and rejected records.
	Verdict string `json:"verdict,omitempty"`
	// Paths are the files a tamper or conflict record is about.
	Paths []string `json:"paths,omitempty"`
	// Digest is VerdictDigest of meta.json as the guards_done phase
	// wrote it.
	Digest string `json:"digest,omitempty"`
	// Tests tally the guards' reports of a recorded iteration, Checks
	// those of its task's own checks, and ChecksBefore those of its
	// task's checks on the untouched checkpoint before its first attempt
	// (SPEC §18).
	Tests        *TestTally `json:"tests,omitempty"`
	Checks       *TestTally `json:"checks,omitempty"`
	ChecksBefore *TestTally `json:"checks_before,omitempty"`
}

// AppendJournal appends one record and fsyncs the journal. A torn last
// line a crash left behind is cut off first (fsutil.AppendLine).
func AppendJournal(path string, r Record) error {
	return AppendJournalAs(path, r, fsutil.Durable)
}

// AppendJournalAs appends one record, fsyncing the journal unless d is
// fsutil.NotSynced: such a record reaches the disk with the next record
// that is fsynced (see fsutil.AppendLineAs).
func AppendJournalAs(path string, r Record, d fsutil.Durability) error {
	line, err := JournalLine(r)
	if err != nil {
		return err
	}
	return fsutil.AppendLineAs(path, line, d)
}

// JournalLine is r's line in the journal, its newline included, as
// AppendJournalAs writes it: with the current time when r has none.
func JournalLine(r Record) ([]byte, error) {
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	line, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode journal record: %w", err)
	}
	return append(line, '\n'), nil
}

// ReadJournal reads every complete record. A last line without its
// newline was torn by a crash in the middle of an append and is ignored,
// even when what remains happens to decode (the next append cuts it off);
// a damaged line elsewhere is an error naming its line number.
func ReadJournal(path string) ([]Record, error) {
	data, err := fsutil.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Record
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	lineNo := 0
	lines := bytes.Count(data, []byte{'\n'})
	for sc.Scan() {
		lineNo++
		if lineNo > lines {
			break // torn last line
		}
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return out, fmt.Errorf("read %s: line %d: %v", path, lineNo, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

// journalTail is how much of the end of the journal UnfinishedStart reads:
// many times what the records of one iteration take.
const journalTail = 256 << 10

// UnfinishedStart returns the last started record of the journal when no
// record ending its iteration (recorded, interrupted, aborted) follows it,
// and nil otherwise. The started record is the durable mark of an
// iteration under way, written before its agent runs; run_state.json gets
// the iteration's in-flight marker moments later, so after a crash the
// journal can know of an iteration the run state does not.
func UnfinishedStart(path string) (*Record, error) {
	rec, finished, err := LastStart(path)
	if err != nil || finished {
		return nil, err
	}
	return rec, nil
}

// UnfinishedStarts returns, earliest first, the started records of the
// journal's end for iterations after after that no record ends
// (recorded, interrupted, aborted): with parallel slots, several
// iterations may have begun since run_state.json was last written.
func UnfinishedStarts(path string, after int) ([]Record, error) {
	starts, ended, err := journalStarts(path)
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, r := range starts {
		if r.Iteration > after && !ended[r.Iteration] {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Record) int { return a.Iteration - b.Iteration })
	return out, nil
}

// The events LastStart looks for, as the runner writes them (compact JSON).
var (
	eventStarted     = []byte(`"event":"` + EventStarted + `"`)
	eventRecorded    = []byte(`"event":"` + EventRecorded + `"`)
	eventInterrupted = []byte(`"event":"` + EventInterrupted + `"`)
	eventAborted     = []byte(`"event":"` + EventAborted + `"`)
)

// LastStart returns the journal's last started record (nil if there is
// none) and whether a record ending its iteration (recorded, interrupted,
// aborted) follows it. Only the end of the journal is read; lines that do
// not decode are skipped.
func LastStart(path string) (*Record, bool, error) {
	starts, ended, err := journalStarts(path)
	if err != nil || len(starts) == 0 {
		return nil, false, err
	}
	last := starts[len(starts)-1]
	return &last, ended[last.Iteration], nil
}

// journalStarts reads the end of the journal: its started records in
// the order written, and the iterations a record ended after their start.
func journalStarts(path string) (starts []Record, ended map[int]bool, err error) {
	ended = map[int]bool{}
	err = ScanJournalTail(path, journalTail, func(line []byte) bool {
		isStart := bytes.Contains(line, eventStarted)
		if !isStart && !bytes.Contains(line, eventRecorded) &&
			!bytes.Contains(line, eventInterrupted) && !bytes.Contains(line, eventAborted) {
			return true // not worth decoding
		}
		var r Record
		if json.Unmarshal(line, &r) != nil || !bytes.Contains(line, []byte(`"event":"`+r.Event+`"`)) {
			return true // not a record the runner wrote
		}
		switch r.Event {
		case EventStarted:
			starts = append(starts, r)
			delete(ended, r.Iteration) // a number is started once; be safe
		case EventRecorded, EventInterrupted, EventAborted:
			ended[r.Iteration] = true
		}
		return true
	})
	return starts, ended, err
}

// RecentEnds returns the records of iterations' ends (recorded,
// interrupted) in the journal's last part (as journalStarts reads it),
// in order: what happened since run_state.json, written lazily while
// slots work, was last saved.
func RecentEnds(p Paths) []Record {
	recs, _ := ReadJournalTail(p.Journal(), journalTail, func(line []byte) bool {
		return bytes.Contains(line, eventRecorded) || bytes.Contains(line, eventInterrupted)
	})
	return recs
}

// CurrentInFlight returns the iteration under way as the files tell it,
// or nil: the earliest of CurrentInFlights.
func CurrentInFlight(p Paths, rs *RunState) *InFlight {
	if all := CurrentInFlights(p, rs); len(all) > 0 {
		return all[0]
	}
	return nil
}

// CurrentInFlights returns the iterations under way as the files tell
// them, earliest first: run_state.json's markers, unless the journal says
// more. The journal's started records are newer when run_state.json has
// not got those iterations' markers yet (a runner writes them while the
// agents work, or died before), and the journal says when a marker's
// iteration is already recorded (its cleared marker is written with the
// next save).
func CurrentInFlights(p Paths, rs *RunState) []*InFlight {
	starts, ended, err := journalStarts(p.Journal())
	if err != nil {
		return rs.Flights()
	}
	var out []*InFlight
	for _, f := range rs.Flights() {
		if !ended[f.Iteration] {
			out = append(out, f)
		}
	}
	known := rs.LastKnown()
	for _, rec := range starts {
		if rec.Iteration > known && !ended[rec.Iteration] {
			out = append(out, &InFlight{Iteration: rec.Iteration, Node: rec.Node, Phase: PhaseStarted, RunnerPID: rec.RunnerPID, RunnerLife: rec.RunnerLife, StartedAt: rec.Time, Slot: rec.Slot})
		}
	}
	slices.SortFunc(out, func(a, b *InFlight) int { return a.Iteration - b.Iteration })
	return out
}
