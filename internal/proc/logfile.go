//go:build unix

package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/runner-cli/runner/internal/fsutil"
)

// markerReserve is the room kept in a limited file for the cut marker line.
const markerReserve = 128

// BoundedOptions configure OpenBounded.
type BoundedOptions struct {
	// Limit bounds the output kept in the file (<= 0: unlimited). Output
	// larger than the limit keeps its head and its tail, with a marker
	// line between them saying how many bytes were cut; the marker fits in
	// the limit, except for limits under 512 bytes.
	Limit int64
	// Append keeps what the file holds and writes after it. Limit then
	// bounds the new part only, unless WholeFile is set.
	Append bool
	// WholeFile keeps the whole file, earlier content and Prefix
	// included, within Limit: earlier content larger than a quarter of the
	// limit is first cut down to its head and tail within that quarter
	// (with a marker line), and the new part gets the rest.
	WholeFile bool
	// Prefix is written before the output, after any earlier content. It
	// is not counted as output.
	Prefix []byte
	// Lines makes every cut fall between lines: the head kept ends at its
	// last newline and the tail kept starts after its first one, when they
	// have one (a single line longer than the room is cut inside).
	Lines bool
}

// BoundedFile streams output to a file and keeps the file within a limit:
// the first bytes (up to the limit) go straight to the file as they come;
// once the output passes half the limit, the newest bytes are also kept in
// a ring. If the output ends up larger than the limit, Close cuts the file
// back to the head and writes a marker line saying how many bytes were
// cut, then the tail. Memory use is the ring, at most half the limit.
// Write never fails, so that a pipe copied into it keeps being drained;
// the first file error is kept for Close. It is safe for concurrent use.
type BoundedFile struct {
	mu      sync.Mutex
	f       *os.File // nil: output is counted and dropped
	path    string
	lines   bool
	base    int64 // file offset where the output starts
	limit   int64 // <= 0: unlimited
	headCap int64
	headNL  int64 // bytes of the head up to its last newline; 0 when none
	tail    *TailBuffer
	total   int64
	err     error
}

// OpenBounded creates (or, with o.Append, opens for appending) the file
// at path and returns a BoundedFile writing to it.
func OpenBounded(path string, o BoundedOptions) (*BoundedFile, error) {
	b, err := openBounded(path, o)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return b, nil
}

func openBounded(path string, o BoundedOptions) (*BoundedFile, error) {
	open := fsutil.Create // a new file, never one truncated through a link
	if o.Append {
		open = fsutil.OpenAppend
	}
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	b := &BoundedFile{f: f, path: path, lines: o.Lines}
	if err := b.start(o); err != nil {
		f.Close()
		return nil, err
	}
	return b, nil
}

// start compacts the earlier content when asked, writes the prefix and
// sets the limit of the new part.
func (b *BoundedFile) start(o BoundedOptions) error {
	size, err := b.f.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	if o.WholeFile && o.Limit > 0 && size > o.Limit/4 {
		if size, err = b.compact(size, o.Limit/4); err != nil {
			return err
		}
	}
	if len(o.Prefix) > 0 {
		if _, err := b.f.Write(o.Prefix); err != nil {
			return err
		}
		size += int64(len(o.Prefix))
	}
	b.base = size
	b.limit = o.Limit
	if o.WholeFile && o.Limit > 0 {
		b.limit = max(o.Limit-size, o.Limit/2)
	}
	if b.limit > 0 {
		room := b.limit
		if room >= 4*markerReserve {
			room -= markerReserve
		}
		b.headCap = room / 2
		if tailCap := room - b.headCap; tailCap > 0 {
			b.tail = NewTailBuffer(int(tailCap))
		}
	}
	return nil
}

// compact cuts the file's size bytes down to their head and tail within
// room, with a marker line between them, and returns the new size.
func (b *BoundedFile) compact(size, room int64) (int64, error) {
	if room >= 4*markerReserve {
		room -= markerReserve
	}
	head, tailLen := room/2, room-room/2
	tail := make([]byte, tailLen)
	if _, err := b.f.ReadAt(tail, size-tailLen); err != nil {
		return 0, err
	}
	if b.lines && head > 0 {
		buf := make([]byte, head)
		if _, err := b.f.ReadAt(buf, 0); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			head = int64(i) + 1
		}
	}
	tail = b.alignTail(tail)
	cut := size - head - int64(len(tail))
	if err := b.writeCut(0, head, cut, tail); err != nil {
		return 0, err
	}
	return b.f.Seek(0, io.SeekCurrent)
}

// alignTail drops the partial first line of a tail with Lines set.
func (b *BoundedFile) alignTail(tail []byte) []byte {
	if !b.lines {
		return tail
	}
	if i := bytes.IndexByte(tail, '\n'); i >= 0 && i+1 < len(tail) {
		return tail[i+1:]
	}
	return tail
}

// Start returns the file offset where this BoundedFile's output begins.
func (b *BoundedFile) Start() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.base
}

// Write keeps p (or what the limit lets through); it never fails.
func (b *BoundedFile) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	start := b.total
	b.total += int64(len(p))
	if b.limit <= 0 {
		b.write(p)
		return len(p), nil
	}
	if start < b.limit {
		end := min(int64(len(p)), b.limit-start)
		b.write(p[:end])
	}
	if b.lines && start < b.headCap {
		inHead := p[:min(int64(len(p)), b.headCap-start)]
		if i := bytes.LastIndexByte(inHead, '\n'); i >= 0 {
			b.headNL = start + int64(i) + 1
		}
	}
	if b.total > b.headCap && b.tail != nil {
		from := max(int64(0), b.headCap-start)
		b.tail.Write(p[from:])
	}
	return len(p), nil
}

func (b *BoundedFile) write(p []byte) {
	if b.f == nil || b.err != nil {
		return
	}
	if _, err := b.f.Write(p); err != nil {
		b.err = fmt.Errorf("write %s: %w", b.path, err)
	}
}

// Close finishes the file (cutting the middle when over the limit) and
// returns the bytes received, the bytes cut and the first error.
func (b *BoundedFile) Close() (total, cut int64, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.limit > 0 && b.total > b.limit {
		head := b.headCap
		if b.lines && b.headNL > 0 {
			head = b.headNL
		}
		tail := b.alignTail(b.tail.Bytes())
		cut = b.total - head - int64(len(tail))
		if b.f != nil && b.err == nil {
			if werr := b.writeCut(b.base, head, cut, tail); werr != nil {
				b.err = fmt.Errorf("cut %s: %w", b.path, werr)
			}
		}
	}
	if b.f != nil {
		if cerr := b.f.Close(); cerr != nil && b.err == nil {
			b.err = fmt.Errorf("close %s: %w", b.path, cerr)
		}
		b.f = nil
	}
	return b.total, cut, b.err
}

// writeCut cuts the file to base+head bytes and writes the marker line
// and the tail after them.
func (b *BoundedFile) writeCut(base, head, cut int64, tail []byte) error {
	if err := b.f.Truncate(base + head); err != nil {
		return err
	}
	if _, err := b.f.Seek(0, io.SeekEnd); err != nil {
		return err
	}
	marker := CutMarker(cut)
	if head > 0 && !b.endsWithNewline(base+head) {
		marker = "\n" + marker
	}
	_, err := b.f.Write(append([]byte(marker), tail...))
	return err
}

// endsWithNewline reports whether the byte before offset end is a newline.
func (b *BoundedFile) endsWithNewline(end int64) bool {
	var c [1]byte
	if _, err := b.f.ReadAt(c[:], end-1); err != nil && !errors.Is(err, io.EOF) {
		return true // unreadable: add no newline
	}
	return c[0] == '\n'
}

// CutMarker is the line a bounded file holds where n bytes were cut.
func CutMarker(n int64) string {
	return fmt.Sprintf("[runner: %d bytes of output cut here]\n", n)
}

// openLog opens the log of a command run ("" = output is counted and
// dropped).
func openLog(path string, appendMode bool, limit int64) (*BoundedFile, error) {
	if path == "" {
		return &BoundedFile{}, nil
	}
	b, err := openBounded(path, BoundedOptions{Limit: limit, Append: appendMode})
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", path, err)
	}
	return b, nil
}
