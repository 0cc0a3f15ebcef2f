//go:build unix

package proc

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// markerReserve is the room kept in a limited log for the cut marker line.
const markerReserve = 128

// boundedLog streams output to a file and keeps the file within a limit:
// the first bytes (up to the limit) go straight to the file as they come;
// once the output passes half the limit, the newest bytes are also kept in
// a fixed ring. If the output ends up larger than the limit, Close cuts the
// file back to the head and writes a marker line saying how many bytes
// were cut, then the tail. Memory use is the ring, at most half the limit.
type boundedLog struct {
	mu      sync.Mutex
	f       *os.File // nil: output is counted and dropped
	path    string
	base    int64 // file offset where this run's output starts
	limit   int64 // <= 0: unlimited
	headCap int64
	tail    *TailBuffer
	total   int64
	err     error
}

func openLog(path string, appendMode bool, limit int64) (*boundedLog, error) {
	if path == "" {
		limit = 0 // nothing is kept, so nothing is cut
	}
	l := &boundedLog{path: path, limit: limit}
	if limit > 0 {
		room := limit
		if room >= 4*markerReserve {
			room -= markerReserve
		}
		l.headCap = room / 2
		if tailCap := room - l.headCap; tailCap > 0 {
			l.tail = NewTailBuffer(int(tailCap))
		}
	}
	if path == "" {
		return l, nil
	}
	flags := os.O_RDWR | os.O_CREATE
	if appendMode {
		flags |= os.O_APPEND
	} else {
		flags |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", path, err)
	}
	if appendMode {
		if l.base, err = f.Seek(0, io.SeekEnd); err != nil {
			f.Close()
			return nil, fmt.Errorf("open log %s: %w", path, err)
		}
	}
	l.f = f
	return l, nil
}

// Write never fails, so that the pipes keep being drained; the first
// file error is kept for Close.
func (l *boundedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := l.total
	l.total += int64(len(p))
	if l.limit <= 0 {
		l.write(p)
		return len(p), nil
	}
	if start < l.limit {
		end := min(int64(len(p)), l.limit-start)
		l.write(p[:end])
	}
	if l.total > l.headCap && l.tail != nil {
		from := max(int64(0), l.headCap-start)
		l.tail.Write(p[from:])
	}
	return len(p), nil
}

func (l *boundedLog) write(p []byte) {
	if l.f == nil || l.err != nil {
		return
	}
	if _, err := l.f.Write(p); err != nil {
		l.err = fmt.Errorf("write log %s: %w", l.path, err)
	}
}

// Close finishes the file (cutting the middle when over the limit) and
// returns the bytes received, the bytes cut and the first error.
func (l *boundedLog) Close() (total, cut int64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.limit > 0 && l.total > l.limit {
		tail := l.tail.Bytes()
		cut = l.total - l.headCap - int64(len(tail))
		if l.f != nil && l.err == nil {
			l.err = l.cut(tail, cut)
		}
	}
	if l.f != nil {
		if cerr := l.f.Close(); cerr != nil && l.err == nil {
			l.err = fmt.Errorf("close log %s: %w", l.path, cerr)
		}
	}
	return l.total, cut, l.err
}

func (l *boundedLog) cut(tail []byte, cut int64) error {
	if err := l.f.Truncate(l.base + l.headCap); err != nil {
		return fmt.Errorf("cut log %s: %w", l.path, err)
	}
	if _, err := l.f.Seek(0, io.SeekEnd); err != nil {
		return fmt.Errorf("cut log %s: %w", l.path, err)
	}
	marker := fmt.Sprintf("[runner: %d bytes of output cut here]\n", cut)
	if l.headCap > 0 && !l.headEndsWithNewline() {
		marker = "\n" + marker
	}
	if _, err := l.f.Write(append([]byte(marker), tail...)); err != nil {
		return fmt.Errorf("write log %s: %w", l.path, err)
	}
	return nil
}

func (l *boundedLog) headEndsWithNewline() bool {
	var b [1]byte
	if _, err := l.f.ReadAt(b[:], l.base+l.headCap-1); err != nil {
		return true // unreadable: add no newline
	}
	return b[0] == '\n'
}
