package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

// journal appends a record durably, which also makes durable every
// record journalLazy appended before it.
func (l *Ledger) journal(rec state.Record) error {
	if err := l.appendJournal(rec, fsutil.Durable); err != nil {
		return err
	}
	l.journalDirty = false
	return nil
}

// journalLazy appends a record without an fsync: it reaches the disk with
// the next durable record (the next iteration's started record), Flush,
// or the kernel's writeback.
func (l *Ledger) journalLazy(rec state.Record) error {
	if err := l.appendJournal(rec, fsutil.NotSynced); err != nil {
		return err
	}
	l.journalDirty = true
	return nil
}

// Journal appends a record of something that happened outside an
// iteration's phases (a task skipped, a tamper found), durably.
func (l *Ledger) Journal(rec state.Record) error { return l.journal(rec) }

// journalOnce appends rec to the journal unless, when resuming, the
// journal already holds the same event for the same iteration: a runner
// that records an iteration again after a crash writes its line once.
// The line is appended without an fsync (see journalLazy): until it is
// durable, a crash leaves the iteration in flight and the next runner
// records it again, which changes nothing a second time.
func (l *Ledger) journalOnce(rec state.Record) error {
	if l.resuming {
		// The journal may have been rotated since (loop.keep_runs).
		for _, path := range []string{l.p.Journal(), l.p.OldJournal()} {
			has, err := journalHas(path, rec.Iteration, rec.Event)
			if err != nil {
				return err
			}
			if has {
				return nil
			}
		}
	}
	return l.journalLazy(rec)
}

// journalHas reports whether the journal holds a record of event for
// iteration. It streams the file; lines that do not decode (a person's
// edit) are skipped, and so is a torn last line, which the next append
// cuts off: its record is written again in full.
func journalHas(path string, iteration int, event string) (bool, error) {
	key := []byte(fmt.Sprintf(`"iteration":%d,`, iteration))
	has := false
	err := state.ScanJournalTail(path, 0, func(line []byte) bool {
		if bytes.Contains(line, key) {
			var rec struct {
				Iteration int    `json:"iteration"`
				Event     string `json:"event"`
			}
			has = json.Unmarshal(line, &rec) == nil && rec.Iteration == iteration && rec.Event == event
		}
		return !has
	})
	return has, err
}

// A journal record takes well under this many bytes per iteration; the
// journal is rotated at keep_runs times it, and never below
// minJournalRotate, so that the two journal files together always hold
// the records of at least the iterations whose folders are kept.
var (
	journalBytesPerRun int64 = 4 << 10
	minJournalRotate   int64 = 4 << 20
)

// rotateJournal bounds the journal when loop.keep_runs is set: once
// state/journal.jsonl is larger than max(4 MiB, keep_runs × 4 KiB), it
// becomes state/journal.1.jsonl (replacing the previous one) and a new
// journal starts. It is called at the start of an iteration, before its
// started record, when nothing is in flight: the records of an iteration
// are never split between the two files, except the recorded line of an
// iteration a crash leaves to be recorded again, which journalHas finds
// in either. The old file is fsynced first, and the rename and the new
// file are made durable together.
func (l *Ledger) rotateJournal() error {
	if l.keepRuns <= 0 {
		return nil
	}
	l.journalMu.Lock()
	defer l.journalMu.Unlock()
	if l.watch.on {
		// The lines of the file about to be put aside are checked first.
		foreign, err := l.takeForeign()
		if err != nil {
			return err
		}
		l.watch.pending = append(l.watch.pending, foreign...)
	}
	limit := max(int64(l.keepRuns)*journalBytesPerRun, minJournalRotate)
	st, err := os.Stat(l.p.Journal())
	if err != nil || st.Size() <= limit {
		return nil
	}
	if err := fsutil.SyncFile(l.p.Journal()); err != nil {
		return err
	}
	l.journalDirty = false
	if err := fsutil.Rename(l.p.Journal(), l.p.OldJournal()); err != nil {
		return fmt.Errorf("loop.keep_runs: rotate the journal: %w", err)
	}
	if err := ensureDurableFile(l.p.Journal()); err != nil {
		return fmt.Errorf("loop.keep_runs: rotate the journal: %w", err)
	}
	l.watch.rotated()
	l.log.Info("rotated the journal (loop.keep_runs)", "old", l.p.Rel(l.p.OldJournal()), "bytes", st.Size())
	return nil
}
