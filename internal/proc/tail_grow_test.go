//go:build unix

package proc

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestTailBufferMatchesNaive writes random pieces to tail buffers of
// several sizes and checks the kept bytes against the end of everything
// written, also while the buffer is still growing.
func TestTailBufferMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, size := range []int{1, 2, 7, 64, 1000} {
		b := NewTailBuffer(size)
		var all []byte
		for i := 0; i < 300; i++ {
			p := make([]byte, rng.IntN(2*size+2))
			for j := range p {
				p[j] = byte(rng.IntN(256))
			}
			if n, err := b.Write(p); n != len(p) || err != nil {
				t.Fatalf("Write = %d, %v", n, err)
			}
			all = append(all, p...)
			want := all[max(0, len(all)-size):]
			if got := b.Bytes(); !bytes.Equal(got, want) {
				t.Fatalf("size %d after %d bytes: kept %d bytes, want the last %d", size, len(all), len(got), len(want))
			}
			if b.Total() != int64(len(all)) {
				t.Fatalf("Total = %d, want %d", b.Total(), len(all))
			}
		}
		if cap(b.ring) > size {
			t.Errorf("size %d: ring grew to %d", size, cap(b.ring))
		}
	}
	small := NewTailBuffer(1 << 20)
	small.Write([]byte("a short message"))
	if cap(small.ring) >= 1<<20 {
		t.Errorf("a 15-byte write allocated %d bytes", cap(small.ring))
	}
}
