package state

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	if err := rotateNotes(path, int64(len(text))); err != nil {
		return err
	}
	switch last, err := lastByte(path); {
	case errors.Is(err, os.ErrNotExist), errors.Is(err, fsutil.ErrSymlink), errors.Is(err, fsutil.ErrNotRegular):
		// Missing, or not a file of the runner's own (a link the agent
		// made, a named pipe): the append starts a new file.
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
	f, err := fsutil.Open(path)
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

// NotesLimit bounds a notes file: an append that would take it past this
// size first moves it aside (RotatedNotes), so the file the prompt reads
// stays small and no number of notes ever stops a run.
const NotesLimit = 1 << 20

// RotatedNotes is where a full notes file goes: assumptions.md becomes
// assumptions.1.md, replacing the one rotated before.
func RotatedNotes(path string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + ".1" + ext
}

// rotateNotes moves the notes file at path aside when adding more bytes
// would take it past NotesLimit. The new file starts with its heading.
func rotateNotes(path string, more int64) error {
	st, err := os.Lstat(path)
	if err != nil || st.Size()+more <= NotesLimit {
		return nil
	}
	if err := fsutil.Rename(path, RotatedNotes(path)); err != nil {
		return fmt.Errorf("rotate %s: %w", path, err)
	}
	return nil
}

// ReadNotesTail reads the end of a notes file, at most limit bytes of it,
// from the start of a line: the most recent notes, which are the ones a
// prompt wants. A missing file is empty.
func ReadNotesTail(path string, limit int64) (string, error) {
	// A FIFO in its place is refused at once instead of blocking, and a
	// symbolic link is not followed (fsutil.Open).
	buf, off, err := fsutil.ReadEnd(path, limit)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if off > 0 {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
		buf = append([]byte(fmt.Sprintf("[older notes left out: %s keeps them]\n", filepath.Base(path))), buf...)
	}
	return strings.ToValidUTF8(string(buf), "\uFFFD"), nil
}
