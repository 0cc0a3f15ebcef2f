package testreport

import (
	"bytes"
	"io"
	"runtime"
	"runtime/debug"
	"testing"
)

// streamTests is how many tests the stream tests generate.
const streamTests = 100_000

// peakHeap samples the heap while a report streams through a parser.
type peakHeap struct{ max uint64 }

func (p *peakHeap) sample() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	p.max = max(p.max, m.HeapAlloc)
}

// checkStreamed checks a report of streamTests generated tests: the
// count, the failures, and that the heap stayed far below the size of
// the input (what the parser keeps is the names, not the text).
func checkStreamed(t *testing.T, rep *Report, err error, extra int, g *genReader, peak *peakHeap) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(rep.Tests), streamTests+extra; got != want {
		t.Fatalf("%d tests, want %d", got, want)
	}
	failed := 0
	for _, tt := range rep.Tests {
		if tt.Status == Fail {
			failed++
		}
	}
	if want := streamTests/100 + extra; failed != want {
		t.Errorf("%d failures, want %d", failed, want)
	}
	t.Logf("%d MB read, heap at most %d MB", g.bytes>>20, peak.max>>20)
	if g.bytes < 40<<20 {
		t.Fatalf("only %d bytes generated", g.bytes)
	}
	// The report itself is about 20 MB here; text kept per test would
	// add 400 bytes or more for each, 40 MB at the least.
	if limit := uint64(g.bytes / 2); peak.max > limit {
		t.Errorf("heap reached %d MB for %d MB of report", peak.max>>20, g.bytes>>20)
	}
}

// checkMessageCap checks that MaxMessages failures kept a message and
// that a late one, late, did not.
func checkMessageCap(t *testing.T, rep *Report, late string) {
	t.Helper()
	kept := 0
	for _, tt := range rep.Tests {
		if tt.Message != "" {
			kept++
		}
	}
	if kept != MaxMessages {
		t.Errorf("%d failures kept a message, want MaxMessages (%d)", kept, MaxMessages)
	}
	if tt, ok := rep.Lookup(late); !ok || tt.Status != Fail || tt.Message != "" {
		t.Errorf("Lookup(%q) = %+v, %v; want a failure without message", late, tt, ok)
	}
}

func TestStreamGoJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 100,000 tests")
	}
	// Garbage is collected early, so that the peak measures what the
	// parser keeps, not when the collector happened to run.
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	runtime.GC()
	peak := &peakHeap{}
	g := &genReader{n: streamTests, test: goJSONTest, end: goJSONEnd, each: peak.sample}
	rep, err := ParseGoJSON(g)
	peak.sample()
	checkStreamed(t, rep, err, 0, g, peak) // packages are not tests
	name := "example.com/gen/p0/Test99"
	if tt, ok := rep.Lookup(name); !ok || tt.Status != Fail || tt.Message != "    gen_test.go:12: "+payload {
		t.Errorf("Lookup(%q) = %+v, %v", name, tt, ok)
	}
	checkMessageCap(t, rep, "example.com/gen/p57/Test57399")
}

func TestStreamJUnit(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 100,000 test cases")
	}
	// Garbage is collected early, so that the peak measures what the
	// parser keeps, not when the collector happened to run.
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	runtime.GC()
	peak := &peakHeap{}
	g := &genReader{n: streamTests, test: junitTest, end: junitEnd, each: peak.sample}
	rep, err := ParseJUnit(g)
	peak.sample()
	checkStreamed(t, rep, err, 0, g, peak)
	name := "gen.Class0.test_99"
	if tt, ok := rep.Lookup(name); !ok || tt.Status != Fail || tt.Message != "assert 99 == 0\nTraceback: line 99" {
		t.Errorf("Lookup(%q) = %+v, %v", name, tt, ok)
	}
	checkMessageCap(t, rep, "gen.Class57.test_57399")
}

// generate builds a whole generated report in memory.
func generate(n int, test func([]byte, int) []byte, end func([]byte, int) []byte) []byte {
	data, _ := io.ReadAll(&genReader{n: n, test: test, end: end})
	return data
}

// BenchmarkParse10k parses a go test -json report of 10,000 tests (in
// 10 packages) and a JUnit document of 10,000 test cases, each test
// printing a 400-byte line (BENCHMARKS.md, "Test reports").
func BenchmarkParse10k(b *testing.B) {
	const n = 10_000
	for _, c := range []struct {
		name  string
		data  []byte
		parse func(io.Reader) (*Report, error)
		want  int
	}{
		{"go-json", generate(n, goJSONTest, goJSONEnd), ParseGoJSON, n}, // a package is not a test
		{"junit", generate(n, junitTest, junitEnd), ParseJUnit, n},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for b.Loop() {
				rep, err := c.parse(bytes.NewReader(c.data))
				if err != nil || len(rep.Tests) != c.want {
					b.Fatalf("%v, %d tests", err, len(rep.Tests))
				}
			}
		})
	}
}
