package serve

import (
	"errors"
	"io"
	"os"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/inert"
)

// Excerpt is the head and the tail of a text file, escaped like terminal
// output (inert.Text: control characters and invalid UTF-8 written
// visibly), so that a log of any size is sent bounded and a page shows
// exactly what is in it.
type Excerpt struct {
	Size int64  `json:"size"`
	Head string `json:"head"`
	// Tail is the end of the file when it is larger than the head and the
	// tail together; Omitted bytes lie between them.
	Tail    string `json:"tail,omitempty"`
	Omitted int64  `json:"omitted,omitempty"`
}

// readExcerpt reads at most head bytes from the start of path and tail
// from its end, opened as fsutil.Open opens files: a named pipe, a device
// or a socket is refused at once, and under a confined folder a link is
// not followed. A missing file is (nil, nil).
func readExcerpt(path string, head, tail int64) (*Excerpt, error) {
	f, err := fsutil.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size <= head+tail {
		// Whole, as far as the size said when it was opened: a log that
		// grows meanwhile is sent as it was.
		data, err := io.ReadAll(io.LimitReader(f, head+tail))
		if err != nil {
			return nil, err
		}
		return &Excerpt{Size: int64(len(data)), Head: inert.Text(string(data))}, nil
	}
	h := make([]byte, head)
	n, err := io.ReadFull(f, h)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	h = h[:n]
	t := make([]byte, tail)
	m, err := f.ReadAt(t, size-tail)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	t = t[:m]
	// Cut at character boundaries, so that a character split by a cut
	// is not shown as invalid bytes.
	hc := len(h)
	for i := len(h) - 1; i >= 0 && i >= len(h)-utf8.UTFMax; i-- {
		if utf8.RuneStart(h[i]) {
			if !utf8.FullRune(h[i:]) {
				hc = i
			}
			break
		}
	}
	tc := 0
	for tc < len(t) && tc < utf8.UTFMax && !utf8.RuneStart(t[tc]) {
		tc++
	}
	return &Excerpt{
		Size:    size,
		Head:    inert.Text(string(h[:hc])),
		Tail:    inert.Text(string(t[tc:])),
		Omitted: size - int64(hc) - int64(len(t)-tc),
	}, nil
}
