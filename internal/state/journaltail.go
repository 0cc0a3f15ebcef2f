package state

import (
	"bufio"
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
// it is lenient: a line that does not decode (a torn last line, a
// person's edit, the first line cut by the window) is skipped. keep, when
// set, picks the lines worth decoding. A missing file has no records.
func ReadJournalTail(path string, window int64, keep func(line []byte) bool) ([]Record, error) {
	// A FIFO put in the journal's place is refused at once, and a
	// symbolic link is not followed (fsutil.Open).
	f, err := fsutil.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	off := int64(0)
	if window > 0 {
		off = max(st.Size()-window, 0)
	}
	br := bufio.NewReader(io.NewSectionReader(f, off, st.Size()-off))
	if off > 0 {
		br.ReadString('\n') // the first line is cut by the window
	}
	var out []Record
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		if keep != nil && !keep(sc.Bytes()) {
			continue
		}
		var rec Record
		if json.Unmarshal(sc.Bytes(), &rec) == nil {
			out = append(out, rec)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}
