package ledger

import (
	"bytes"
	"encoding/json"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

// The review (SPEC §17) is a phase between guards_done and recorded: the
// in-flight marker says reviewing while the reviewer works (meta.json
// stays in guards_done, so a runner that dies meanwhile asks again), and
// the verdict is made durable in meta.json, phase reviewed, before the
// outcome is recorded, so that it is never asked for twice.

// ReviewStarted notes that the reviewer of iteration n started, in
// process group pgid: the in-flight marker moves to phase reviewing and
// names the group, written in the background as AgentStarted writes it
// (AgentExited waits for it).
func (l *Ledger) ReviewStarted(n, pgid int) {
	f := l.rs.Flight(n)
	if f == nil {
		return
	}
	f.Phase = state.PhaseReviewing
	l.AgentStarted(n, pgid)
}

// ReviewFailed records a reviewer's run that gave no verdict: meta.json
// (still in phase guards_done) shows it to people, not fsynced, and the
// journal gets rec as a review_failed record.
func (l *Ledger) ReviewFailed(meta *state.Meta, rec state.Record) error {
	if err := state.SaveMetaAs(l.p.RunDir(meta.Iteration), meta, fsutil.NotSynced); err != nil {
		return err
	}
	rec.Iteration, rec.Node, rec.Event = meta.Iteration, meta.Node, state.EventReviewFailed
	return l.journalLazy(rec)
}

// Reviewed makes the verdict in meta.Review durable: meta.json in phase
// reviewed, then the in-flight marker; then the journal's reviewed line.
// The reviewer's usage, summed over its runs for this verdict, is added
// to the totals with it (a runner that dies before the marker moves adds
// it when it resumes).
func (l *Ledger) Reviewed(meta *state.Meta) error {
	l.AddReviewUsage(meta)
	meta.Phase = state.PhaseReviewed
	if err := l.commitPhase(meta); err != nil {
		return err
	}
	rec := state.Record{Iteration: meta.Iteration, Node: meta.Node, Event: state.EventReviewed, Phase: meta.Phase}
	if rv := meta.Review; rv != nil {
		rec.Verdict, rec.Executor, rec.Usage, rec.Error = rv.Verdict, rv.Executor, rv.Usage, rv.Error
	}
	return l.journalLazy(rec)
}

// The events Rejections looks for, as the runner writes them.
var (
	eventRejected = []byte(`"event":"` + state.EventRejected + `"`)
	eventReset    = []byte(`"event":"` + state.EventReset + `"`)
)

// Rejections counts the rejected records of node in the journal (the
// rotated one first) after the last reset record of a node covers says
// holds it (the node itself or an ancestor: `runner reset` reopens what
// is under the node it names), leaving out iteration skip's. Lines that
// do not decode are skipped.
func (l *Ledger) Rejections(node string, covers func(id string) bool, skip int) (int, error) {
	n := 0
	for _, path := range []string{l.p.OldJournal(), l.p.Journal()} {
		err := state.ScanJournalTail(path, 0, func(line []byte) bool {
			isReset := bytes.Contains(line, eventReset)
			if !isReset && !bytes.Contains(line, eventRejected) {
				return true
			}
			var rec struct {
				Iteration int    `json:"iteration"`
				Node      string `json:"node"`
				Event     string `json:"event"`
			}
			if json.Unmarshal(line, &rec) != nil {
				return true
			}
			switch {
			case rec.Event == state.EventReset && covers(rec.Node):
				n = 0
			case rec.Event == state.EventRejected && rec.Node == node && rec.Iteration != skip:
				n++
			}
			return true
		})
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}
