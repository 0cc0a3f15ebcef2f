package state

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/runner-cli/runner/internal/fsutil"
)

// NoteLines returns the lines AppendNotes writes for items: one per item
// that is not blank, "- [iteration N, node ID] text\n", with the item's
// whitespace folded to single spaces.
func NoteLines(iteration int, node string, items []string) []string {
	var lines []string
	for _, it := range items {
		it = strings.Join(strings.Fields(it), " ")
		if it == "" {
			continue
		}
		lines = append(lines, fmt.Sprintf("- [iteration %d, node %s] %s\n", iteration, node, it))
	}
	return lines
}

// AppendNotes appends items to a persistent notes file (assumptions.md or
// questions.md), one line each (NoteLines), tagged with the iteration and
// node so a reader knows where each came from. The file gets a heading
// when created. The new lines start on a line of their own also when the
// file does not end with a newline (a person's edit, or an append torn by
// a crash), and everything is written with one append.
func AppendNotes(path, heading string, iteration int, node string, items []string) error {
	lines := NoteLines(iteration, node, items)
	if len(lines) == 0 {
		return nil
	}
	text := strings.Join(lines, "")
	switch last, err := lastByte(path); {
	case errors.Is(err, os.ErrNotExist):
		text = "# " + heading + "\n\n" + text
	case err != nil:
		return fmt.Errorf("append %s: %w", path, err)
	case last != '\n':
		text = "\n" + text
	}
	return fsutil.AppendSync(path, []byte(text))
}

// lastByte returns the last byte of the file, '\n' for an empty one.
func lastByte(path string) (byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return '\n', err
	}
	var b [1]byte
	_, err = f.ReadAt(b[:], st.Size()-1)
	return b[0], err
}
