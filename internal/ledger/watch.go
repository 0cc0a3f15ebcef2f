package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

// An agent that runs unconfined beside other slots (sandbox.mode = "off"
// with parallel slots) can append to the journal while the runner does:
// a `skipped` record of its own, say, which would make a task done
// without running it. The journal cannot be compared as a whole then, as
// it is without slots, because the other slots write it meanwhile. So the
// ledger tells its own lines from the others': from a mark
// (WatchJournal) it notes every line it appends, and ForeignJournal
// takes out of the journal the lines it did not append, and returns
// them. Every append of the ledger's goes through appendJournal.

// journalWatch is what the ledger appended to the journal since the
// mark.
type journalWatch struct {
	on      bool
	offset  int64          // the journal's size at the mark
	own     map[string]int // the lines appended since, by content
	pending [][]byte       // foreign lines taken out before a rotation
}

// rotated moves the mark to the start of a new journal file.
func (w *journalWatch) rotated() {
	w.offset, w.own = 0, map[string]int{}
}

// appendJournal appends rec to the journal as d says, noting its line
// when the journal is watched.
func (l *Ledger) appendJournal(rec state.Record, d fsutil.Durability) error {
	line, err := state.JournalLine(rec)
	if err != nil {
		return err
	}
	l.journalMu.Lock()
	defer l.journalMu.Unlock()
	if err := fsutil.AppendLineAs(l.p.Journal(), line, d); err != nil {
		return err
	}
	if l.watch.on {
		l.watch.own[string(line)]++
	}
	return nil
}

// WatchJournal marks the journal's end: what others append after it,
// ForeignJournal finds. A mark set again moves to the end: what was
// appended since the last ForeignJournal stays (the foreign lines found
// before a rotation are still returned by the next one).
func (l *Ledger) WatchJournal() error {
	l.journalMu.Lock()
	defer l.journalMu.Unlock()
	size, err := journalSize(l.p.Journal())
	if err != nil {
		return err
	}
	l.watch = journalWatch{on: true, offset: size, own: map[string]int{}, pending: l.watch.pending}
	return nil
}

// WatchingJournal says whether the journal is watched (WatchJournal).
func (l *Ledger) WatchingJournal() bool {
	l.journalMu.Lock()
	defer l.journalMu.Unlock()
	return l.watch.on
}

// ForeignJournal takes out of the journal the lines appended since the
// mark that the ledger did not append (whole or torn), and returns them;
// the mark moves to the journal's end. The journal keeps everything
// else as it was. Nil when the journal is not watched.
func (l *Ledger) ForeignJournal() ([][]byte, error) {
	l.journalMu.Lock()
	defer l.journalMu.Unlock()
	if !l.watch.on {
		return nil, nil
	}
	foreign, err := l.takeForeign()
	foreign = append(l.watch.pending, foreign...)
	l.watch.pending = nil
	return foreign, err
}

// takeForeign is ForeignJournal's work, under journalMu. The lines the
// ledger appended since the mark are written back in their order from
// the mark on, without the others; a journal cut shorter than the mark
// is a foreign change too (what was cut cannot be put back).
func (l *Ledger) takeForeign() ([][]byte, error) {
	path := l.p.Journal()
	f, err := fsutil.OpenWrite(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < l.watch.offset {
		cut := fmt.Appendf(nil, "[the journal was cut from %d to %d bytes]\n", l.watch.offset, st.Size())
		l.watch.offset, l.watch.own = st.Size(), map[string]int{}
		return [][]byte{cut}, nil
	}
	tail := make([]byte, st.Size()-l.watch.offset)
	if _, err := f.ReadAt(tail, l.watch.offset); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	var kept, foreign [][]byte
	for len(tail) > 0 {
		line := tail
		if i := bytes.IndexByte(tail, '\n'); i >= 0 {
			line = tail[:i+1]
		}
		tail = tail[len(line):]
		if l.watch.own[string(line)] > 0 {
			l.watch.own[string(line)]--
			kept = append(kept, line)
		} else {
			foreign = append(foreign, line)
		}
	}
	l.watch.own = map[string]int{}
	if len(foreign) == 0 {
		l.watch.offset = st.Size()
		return nil, nil
	}
	own := bytes.Join(kept, nil)
	if err := f.Truncate(l.watch.offset); err != nil {
		return nil, err
	}
	if _, err := f.WriteAt(own, l.watch.offset); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	l.watch.offset += int64(len(own))
	return foreign, nil
}

// journalSize is the journal's size, 0 when there is none.
func journalSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}
