//go:build unix

package proc

import "sync"

// TailBuffer is an io.Writer that keeps only the last Max bytes written to
// it. The bytes are kept in a slice that grows with what is written, up to
// Max, and then in a fixed ring of Max bytes, so a command that prints
// little costs little. It is safe for concurrent use.
type TailBuffer struct {
	mu    sync.Mutex
	max   int
	ring  []byte
	pos   int // next write position in ring
	total int64
}

// NewTailBuffer returns a TailBuffer keeping the last max bytes (max > 0).
func NewTailBuffer(max int) *TailBuffer {
	if max < 1 {
		max = 1
	}
	return &TailBuffer{max: max}
}

// Write keeps the end of p; it never fails.
func (t *TailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(n)
	if len(t.ring) < t.max {
		// Not full yet: ring holds everything written so far, in order.
		if need := len(t.ring) + n; need < t.max {
			if need > cap(t.ring) {
				grown := make([]byte, len(t.ring), min(t.max, max(2*need, 512)))
				copy(grown, t.ring)
				t.ring = grown
			}
			t.ring = append(t.ring, p...)
			t.pos = len(t.ring)
			return n, nil
		}
		full := make([]byte, t.max)
		if n < t.max {
			copy(full, t.ring[len(t.ring)-(t.max-n):])
			copy(full[t.max-n:], p)
		} else {
			copy(full, p[n-t.max:])
		}
		t.ring, t.pos = full, 0
		return n, nil
	}
	if len(p) >= t.max {
		copy(t.ring, p[len(p)-t.max:])
		t.pos = 0
		return n, nil
	}
	c := copy(t.ring[t.pos:], p)
	if c < len(p) {
		copy(t.ring, p[c:])
	}
	t.pos = (t.pos + len(p)) % t.max
	return n, nil
}

// Bytes returns a copy of the kept bytes, oldest first.
func (t *TailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.total < int64(t.max) {
		return append([]byte(nil), t.ring[:t.total]...)
	}
	out := make([]byte, 0, t.max)
	out = append(out, t.ring[t.pos:]...)
	return append(out, t.ring[:t.pos]...)
}

// Total returns how many bytes were written in all.
func (t *TailBuffer) Total() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}
