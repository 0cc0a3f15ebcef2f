package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/runner-cli/runner/internal/fsutil"
)

// ReadJournalTail reads the records of the last window bytes of a
// journal file (all of it when window is 0 or more than its size), for
// people reading it: `runner report`, the dashboard. Unlike ReadJournal
// it is lenient: a line that does not decode (a person's edit) is
// skipped, as are a torn last line and the first line cut by the window
// (ScanJournalTail). keep, when
// set, picks the lines worth decoding. A missing file has no records.
func ReadJournalTail(path string, window int64, keep func(line []byte) bool) ([]Record, error) {
	var out []Record
	err := ScanJournalTail(path, window, func(line []byte) bool {
		if keep == nil || keep(line) {
			var rec Record
			if json.Unmarshal(line, &rec) == nil {
				out = append(out, rec)
			}
		}
		return true
	})
	return out, err
}

// ScanJournalTail calls fn with each line of the last window bytes of a
// journal file (all of it when window is 0 or more than its size), in
// order and without its newline, until fn returns false. The first line
// is left out when the window cuts it, and so is a torn last line (see
// completeLines). line is valid only until fn returns. A missing file has
// no lines.
func ScanJournalTail(path string, window int64, fn func(line []byte) bool) error {
	// A FIFO put in the journal's place is refused at once, and a
	// symbolic link is not followed (fsutil.Open).
	f, err := fsutil.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	off := int64(0)
	if window > 0 {
		off = max(st.Size()-window, 0)
	}
	br := bufio.NewReader(io.NewSectionReader(f, off, st.Size()-off))
	if off > 0 {
		br.ReadString('\n') // the first line is cut by the window
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	sc.Split(completeLines)
	for sc.Scan() {
		if !fn(sc.Bytes()) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// completeLines splits lines as bufio.ScanLines does, but leaves out a
// last line without its newline: one a crash cut short, which is no
// record even when what remains decodes, since the next append cuts it
// off (fsutil.AppendLine).
func completeLines(data []byte, atEOF bool) (advance int, line []byte, err error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, bytes.TrimSuffix(data[:i], []byte{'\r'}), nil
	}
	return 0, nil, nil
}
