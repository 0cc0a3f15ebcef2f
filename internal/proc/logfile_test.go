//go:build unix

package proc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"empty", 4, nil, ""},
		{"under", 4, []string{"ab"}, "ab"},
		{"exact", 4, []string{"ab", "cd"}, "abcd"},
		{"wraps", 4, []string{"abc", "def"}, "cdef"},
		{"one big write", 4, []string{"0123456789"}, "6789"},
		{"many small", 3, []string{"a", "b", "c", "d", "e"}, "cde"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewTailBuffer(tt.max)
			var total int64
			for _, w := range tt.writes {
				b.Write([]byte(w))
				total += int64(len(w))
			}
			if got := string(b.Bytes()); got != tt.want {
				t.Errorf("Bytes = %q, want %q", got, tt.want)
			}
			if b.Total() != total {
				t.Errorf("Total = %d, want %d", b.Total(), total)
			}
		})
	}
}

func TestBoundedLog(t *testing.T) {
	line := func(i int) string { return fmt.Sprintf("line %04d\n", i) } // 10 bytes
	var all strings.Builder
	for i := range 300 {
		all.WriteString(line(i))
	}
	out := all.String() // 3000 bytes
	tests := []struct {
		name    string
		limit   int64
		chunk   int
		prefix  string // existing file content, with append mode
		wantCut int64
	}{
		{"unlimited", 0, 7, "", 0},
		{"under the limit", 4000, 100, "", 0},
		{"exactly the limit", 3000, 3000, "", 0},
		{"over, small chunks", 1024, 3, "", 3000 - (1024-markerReserve)/2*2},
		{"over, one big chunk", 1024, 3000, "", 3000 - (1024-markerReserve)/2*2},
		{"over, appended", 1024, 64, "earlier guard\n", 3000 - (1024-markerReserve)/2*2},
		{"tiny limit", 10, 1, "", 2990},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.log")
			if tt.prefix != "" {
				if err := os.WriteFile(path, []byte(tt.prefix), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l, err := openLog(path, tt.prefix != "", tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(out); i += tt.chunk {
				l.Write([]byte(out[i:min(i+tt.chunk, len(out))]))
			}
			total, cut, err := l.Close()
			if err != nil || total != int64(len(out)) || cut != tt.wantCut {
				t.Fatalf("Close = %d, %d, %v; want %d, %d, nil", total, cut, err, len(out), tt.wantCut)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(data, []byte(tt.prefix)) {
				t.Fatalf("appended log lost its earlier content")
			}
			got := string(data[len(tt.prefix):])
			if tt.wantCut == 0 {
				if got != out {
					t.Fatalf("log = %d bytes, want the whole %d-byte output", len(got), len(out))
				}
				return
			}
			if tt.limit >= 4*markerReserve && int64(len(got)) > tt.limit {
				t.Errorf("log part is %d bytes, over the %d limit", len(got), tt.limit)
			}
			marker := fmt.Sprintf("[runner: %d bytes of output cut here]\n", cut)
			i := strings.Index(got, marker)
			if i < 0 {
				t.Fatalf("no marker %q in %q", marker, got)
			}
			head, tail := strings.TrimSuffix(got[:i], "\n"), got[i+len(marker):]
			if !strings.HasPrefix(out, head) || !strings.HasSuffix(out, tail) {
				t.Errorf("head or tail is not the output's: head %q, tail %q", head, tail)
			}
			if int64(len(got[:i])) < int64(len(head)) || int64(len(head)+len(tail))+cut != int64(len(out)) {
				t.Errorf("head %d + tail %d + cut %d != %d", len(head), len(tail), cut, len(out))
			}
		})
	}
}

func TestBoundedLogWithoutFile(t *testing.T) {
	l, err := openLog("", false, 100)
	if err != nil {
		t.Fatal(err)
	}
	l.Write(bytes.Repeat([]byte("x"), 1000))
	if total, cut, err := l.Close(); total != 1000 || cut != 0 || err != nil {
		t.Errorf("Close = %d, %d, %v; want 1000, 0, nil", total, cut, err)
	}
}

// TestBoundedFileLines checks that with Lines every cut falls between
// lines, the marker on a line of its own, within the limit.
func TestBoundedFileLines(t *testing.T) {
	var all strings.Builder
	for i := 0; all.Len() < 20000; i++ {
		fmt.Fprintf(&all, `{"n":%d,"pad":"%s"}`+"\n", i, strings.Repeat("x", i%37))
	}
	out := all.String()
	for _, chunk := range []int{1, 7, 4096, len(out)} {
		path := filepath.Join(t.TempDir(), "events.jsonl")
		b, err := OpenBounded(path, BoundedOptions{Limit: 2048, Lines: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(out); i += chunk {
			b.Write([]byte(out[i:min(i+chunk, len(out))]))
		}
		total, cut, err := b.Close()
		if err != nil || total != int64(len(out)) || cut == 0 {
			t.Fatalf("chunk %d: Close = %d, %d, %v", chunk, total, cut, err)
		}
		data := readFile(t, path)
		if len(data) > 2048 {
			t.Errorf("chunk %d: %d bytes, over the limit", chunk, len(data))
		}
		marker := CutMarker(cut)
		i := strings.Index(data, marker)
		if i < 0 {
			t.Fatalf("chunk %d: no marker %q in\n%s", chunk, marker, data)
		}
		head, tail := data[:i], data[i+len(marker):]
		if !strings.HasPrefix(out, head) || !strings.HasSuffix(out, tail) || !strings.HasSuffix(head, "\n") ||
			!strings.Contains(out, "\n"+tail) || int64(len(head)+len(tail))+cut != int64(len(out)) {
			t.Errorf("chunk %d: head %q and tail %q are not whole lines of the output with %d cut", chunk, head, tail, cut)
		}
	}
}

// TestBoundedFileWholeFile appends several parts to one file and checks
// that it stays within the limit, keeps the start of the first part, the
// prefix and the end of the last one, and reports where the part starts.
func TestBoundedFileWholeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "executor.log")
	const limit = 4096
	for run := 1; run <= 5; run++ {
		prefix := fmt.Sprintf("\n--- run %d ---\n", run)
		b, err := OpenBounded(path, BoundedOptions{Limit: limit, Append: run > 1, WholeFile: true, Prefix: []byte(prefix)})
		if err != nil {
			t.Fatal(err)
		}
		start := b.Start()
		body := fmt.Sprintf("run %d starts\n%s\nrun %d ends\n", run, strings.Repeat("y", 1000*run), run)
		b.Write([]byte(body))
		if _, _, err := b.Close(); err != nil {
			t.Fatal(err)
		}
		data := readFile(t, path)
		if len(data) > limit {
			t.Errorf("run %d: file is %d bytes, over %d", run, len(data), limit)
		}
		if !strings.HasPrefix(data, "\n--- run 1 ---\nrun 1 starts\n") {
			t.Errorf("run %d: the file lost its start: %q", run, data[:40])
		}
		if start > int64(len(data)) || !strings.HasSuffix(data[:start], prefix) ||
			!strings.HasPrefix(data[start:], fmt.Sprintf("run %d starts\n", run)) || !strings.HasSuffix(data, fmt.Sprintf("run %d ends\n", run)) {
			t.Errorf("run %d: the part at %d is not this run's:\n%s", run, start, data)
		}
	}
}

func TestBoundedFileWholeFileLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	var earlier strings.Builder
	for i := 0; earlier.Len() < 10000; i++ {
		fmt.Fprintf(&earlier, `{"earlier":%d}`+"\n", i)
	}
	if err := os.WriteFile(path, []byte(earlier.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := OpenBounded(path, BoundedOptions{Limit: 4096, Append: true, WholeFile: true, Lines: true, Prefix: []byte("--- again ---\n")})
	if err != nil {
		t.Fatal(err)
	}
	b.Write([]byte(`{"later":1}` + "\n"))
	if _, cut, err := b.Close(); cut != 0 || err != nil {
		t.Fatalf("Close: cut %d, %v", cut, err)
	}
	data := readFile(t, path)
	if len(data) > 1024+len("--- again ---\n")+len(`{"later":1}`+"\n") {
		t.Errorf("the earlier content was not cut to a quarter of the limit: %d bytes", len(data))
	}
	for _, line := range strings.Split(strings.TrimSuffix(data, "\n"), "\n") {
		if !strings.HasPrefix(line, `{"earlier":`) && !strings.HasPrefix(line, "[runner: ") && line != "--- again ---" && line != `{"later":1}` {
			t.Errorf("line %q is not whole", line)
		}
	}
	if !strings.Contains(data, " bytes of output cut here]\n") {
		t.Errorf("no marker in %q", data)
	}
}
