package testreport

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// genReader generates a report on the fly, one test at a time, without
// ever holding more than one test's text: the stream tests read 100,000
// tests through it.
type genReader struct {
	n, i  int
	tail  bool
	buf   []byte
	bytes int64
	// test appends test i's text; end appends what closes the report.
	test func(b []byte, i int) []byte
	end  func(b []byte, n int) []byte
	// each is called before every 1,000th test (memory samples).
	each func()
}

func (g *genReader) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		switch {
		case g.i < g.n:
			if g.each != nil && g.i%1000 == 0 {
				g.each()
			}
			g.buf = g.test(g.buf[:0], g.i)
			g.i++
		case !g.tail:
			g.tail = true
			g.buf = g.end(g.buf[:0], g.n)
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	g.bytes += int64(n)
	return n, nil
}

// genPerPackage is how many tests a generated go test -json package has.
const genPerPackage = 1000

// payload is the line each generated test prints.
var payload = strings.Repeat("x", 400)

// goJSONTest appends the go test -json events of test i: every 100th
// one fails, the others pass; each prints a line of 400 bytes. A
// package starts every genPerPackage tests and ends with its result.
func goJSONTest(b []byte, i int) []byte {
	pkg := "example.com/gen/p" + strconv.Itoa(i/genPerPackage)
	name := "Test" + strconv.Itoa(i)
	// ev appends an event; output is JSON-escaped already.
	ev := func(b []byte, action, test, output string) []byte {
		b = append(b, `{"Time":"2026-11-28T04:24:53.767838Z","Action":"`+action+`","Package":"`+pkg+`"`...)
		if test != "" {
			b = append(b, `,"Test":"`+test+`"`...)
		}
		if output != "" {
			b = append(b, `,"Output":"`+output+`"`...)
		}
		if action == "pass" || action == "fail" {
			b = append(b, `,"Elapsed":0`...)
		}
		return append(b, "}\n"...)
	}
	if i%genPerPackage == 0 {
		if i > 0 {
			b = goJSONPackageEnd(b, i-1)
		}
		b = ev(b, "start", "", "")
	}
	result := "pass"
	if i%100 == 99 {
		result = "fail"
	}
	b = ev(b, "run", name, "")
	b = ev(b, "output", name, `=== RUN   `+name+`\n`)
	b = ev(b, "output", name, `    gen_test.go:12: `+payload+`\n`)
	b = ev(b, "output", name, `--- `+strings.ToUpper(result)+`: `+name+` (0.00s)\n`)
	return ev(b, result, name, "")
}

// goJSONPackageEnd appends the result of the package of test i.
func goJSONPackageEnd(b []byte, i int) []byte {
	pkg := "example.com/gen/p" + strconv.Itoa(i/genPerPackage)
	b = append(b, `{"Time":"2026-11-28T04:24:53.768Z","Action":"output","Package":"`+pkg+`","Output":"FAIL\t`+pkg+`\t0.1s\n"}`+"\n"...)
	return append(b, `{"Time":"2026-11-28T04:24:53.768Z","Action":"fail","Package":"`+pkg+`","Elapsed":0.1}`+"\n"...)
}

func goJSONEnd(b []byte, n int) []byte { return goJSONPackageEnd(b, n-1) }

// junitTest appends test case i of a JUnit document: every 100th one
// fails, every 100th from the 50th is skipped, each has 400 bytes of
// system-out. Cases go 1,000 to a <testsuite>.
func junitTest(b []byte, i int) []byte {
	if i == 0 {
		b = append(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<testsuites name="gen">`+"\n"...)
	}
	if i%genPerPackage == 0 {
		if i > 0 {
			b = append(b, "  </testsuite>\n"...)
		}
		b = fmt.Appendf(b, "  <testsuite name=\"suite%d\" tests=\"%d\">\n", i/genPerPackage, genPerPackage)
	}
	b = fmt.Appendf(b, `    <testcase classname="gen.Class%d" name="test_%d" time="0.001">`, i/genPerPackage, i)
	switch i % 100 {
	case 99:
		b = fmt.Appendf(b, `<failure message="assert %d == 0" type="AssertionError">Traceback: line %d</failure>`, i, i)
	case 49:
		b = append(b, `<skipped message="not today"/>`...)
	}
	b = append(b, "<system-out>"+payload+"</system-out></testcase>\n"...)
	return b
}

func junitEnd(b []byte, n int) []byte {
	return append(b, "  </testsuite>\n</testsuites>\n"...)
}
