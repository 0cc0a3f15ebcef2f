package loop

import (
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/runner-cli/runner/internal/fsutil"

	"github.com/runner-cli/runner/internal/state"
)

// pruneRuns applies loop.keep_runs once iteration last is recorded: the
// oldest run folders beyond keep_runs are removed. The folder of last is
// always kept (the next iteration's failure.md reads its failure.log), and
// no other iteration is in flight at that point. runs/ is listed once per
// run of the loop; after that the folders are tracked as they are
// created, so pruning costs one removal per iteration.
//
// Removal is not made durable: a folder that reappears after a machine
// crash is removed again next time. A failure to remove is logged and
// the run goes on.
func (r *Runner) pruneRuns(last int) {
	keep := r.cfg.Loop.KeepRuns
	if keep <= 0 {
		r.cache.runs = nil
		return
	}
	c := &r.cache
	if c.runs == nil {
		runs, err := listRuns(r.p)
		if err != nil {
			r.log.Warn("loop.keep_runs: cannot list the run folders; nothing pruned", "err", err)
			return
		}
		c.runs = runs
	} else if n := len(c.runs); n == 0 || c.runs[n-1] < last {
		c.runs = append(c.runs, last)
	}
	for len(c.runs) > keep {
		n := c.runs[0]
		if n >= last {
			break
		}
		dir := r.p.RunDir(n)
		if err := fsutil.RemoveAll(dir); err != nil {
			r.log.Warn("loop.keep_runs: cannot remove an old run folder", "folder", r.p.Rel(dir), "err", err)
			return
		}
		c.runs = c.runs[1:]
	}
	if r.keep != nil && len(c.runs) > 0 {
		r.keep.Prune(c.runs[0])
	}
}

// listRuns returns the numbers of the run folders in runs/, in order.
func listRuns(p state.Paths) ([]int, error) {
	entries, err := fsutil.ReadDir(p.RunsDir())
	if err != nil {
		return nil, err
	}
	runs := make([]int, 0, len(entries))
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n < 1 || !e.IsDir() || state.RunName(n) != e.Name() {
			continue
		}
		runs = append(runs, n)
	}
	slices.Sort(runs)
	return runs, nil
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
func (r *Runner) rotateJournal() error {
	keep := r.cfg.Loop.KeepRuns
	if keep <= 0 {
		return nil
	}
	limit := max(int64(keep)*journalBytesPerRun, minJournalRotate)
	st, err := os.Stat(r.p.Journal())
	if err != nil || st.Size() <= limit {
		return nil
	}
	if err := fsutil.SyncFile(r.p.Journal()); err != nil {
		return err
	}
	r.journalDirty = false
	if err := fsutil.Rename(r.p.Journal(), r.p.OldJournal()); err != nil {
		return fmt.Errorf("loop.keep_runs: rotate the journal: %w", err)
	}
	if err := ensureDurableFile(r.p.Journal()); err != nil {
		return fmt.Errorf("loop.keep_runs: rotate the journal: %w", err)
	}
	r.log.Info("rotated the journal (loop.keep_runs)", "old", r.p.Rel(r.p.OldJournal()), "bytes", st.Size())
	return nil
}
