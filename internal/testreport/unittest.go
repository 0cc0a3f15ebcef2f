package testreport

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/runner-cli/runner/internal/lazyregexp"
)

// Unittest is the kind of report read from what `python3 -m unittest -v`
// prints: one line per test ("test_add (tests.test_money.MoneyTest.test_add)
// ... ok"), then a section per failure. unittest prints it on stderr;
// the runner reads both of the command's streams, line by line, so a
// command written with 2>&1 reads the same.
const Unittest = "unittest"

// unittestLine matches the start of a test's line in unittest -v output:
// the method, its test id in parentheses (Python 3.11 and later:
// "module.Class.method"; before: "module.Class"), and what follows:
// nothing (a docstring line comes next), " ... RESULT", or a subtest's
// parameters and then " ... RESULT". The indentation marks a subtest.
var unittestLine = lazyregexp.New(`^(\s*)([A-Za-z_][A-Za-z0-9_]*) \(([A-Za-z_][A-Za-z0-9_.]*)\)(.*)$`)

// unittestHeader matches the header of a failure's section: "FAIL:",
// "ERROR:" or "UNEXPECTED SUCCESS:" and the test, with a subtest's
// parameters after it.
var unittestHeader = lazyregexp.New(`^(FAIL|ERROR|UNEXPECTED SUCCESS): ([A-Za-z_][A-Za-z0-9_]*) \(([A-Za-z_][A-Za-z0-9_.]*)\)`)

// unittestRan matches the summary line, "Ran 12 tests in 0.004s".
var unittestRan = lazyregexp.New(`^Ran (\d+) tests? in `)

// unittestName is a test's name in the report: its test id, the method
// appended where the id names the class only (Python before 3.11).
func unittestName(method, id string) string {
	if id == method || strings.HasSuffix(id, "."+method) {
		return validUTF8(id)
	}
	return validUTF8(id + "." + method)
}

// unittestResult reads the word unittest prints after " ... ": ok
// and an expected failure pass, FAIL, ERROR and an unexpected success
// fail, "skipped 'why'" skips. ok is false for anything else (the test's
// own output, printed before its result).
func unittestResult(s string) (status string, ok bool) {
	switch s = strings.TrimSpace(s); {
	case s == "ok", s == "expected failure":
		return Pass, true
	case s == "FAIL", s == "ERROR", s == "unexpected success":
		return Fail, true
	case s == "skipped" || strings.HasPrefix(s, "skipped "):
		return Skip, true
	}
	return "", false
}

// Sections of unittest -v output.
const (
	utTests   = iota // the test lines
	utHeader         // after a line of '=': a failure's header comes
	utDashes         // after the header: a line of '-' comes
	utMessage        // the failure's traceback
)

// unittestReport is the state of unittest -v output being read.
type unittestReport struct {
	rep *Report
	// pending is the test whose line came without its result yet (its
	// own output came first, or its subtests); doc is a test whose line
	// ends at its id: its docstring's line holds " ... RESULT".
	pending, doc string
	section      int
	failing      string // the test of the failure section being read
	msg          head
	ran          int // tests the summary line counts; -1 before it
	lines        int
}

// ParseUnittest reads the output of `python3 -m unittest -v`,
// streaming. A test is named by its id ("tests.test_money.MoneyTest.test_add");
// a subtest's result is its test's (the worst one counts); a failure
// outside any test (setUpClass, setUpModule) is the test the header names
// ("tests.test_money.MoneyTest.setUpClass"); a module that cannot be
// imported is the failing test unittest makes of it
// ("unittest.loader._FailedTest.test_money"). A failure's section is its
// message. A test whose line came without a result fails with NoResult
// (the run was killed, or timed out). Lines that are not unittest's are
// skipped; output without -v's test lines is malformed.
func ParseUnittest(r io.Reader) (*Report, error) {
	p := &unittestReport{rep: &Report{}, ran: -1}
	l := newLines(r)
	if err := l.each(func(line []byte) { p.line(string(line)) }); err != nil {
		return nil, err
	}
	p.endSection()
	p.rep.finish(func(int) string { return NoResult })
	switch {
	case len(p.rep.Tests) > 0:
		return p.rep, nil
	case p.ran > 0:
		return nil, malformed("unittest ran %d tests but printed no test line: run it with -v", p.ran)
	case p.ran < 0:
		return nil, malformed("no unittest -v test line in the output's %d lines (is -v missing?)", l.n)
	}
	return nil, errNoTests
}

func (p *unittestReport) line(line string) {
	trimmed := strings.TrimRight(line, " \t")
	if isRule(trimmed, '=') {
		p.endSection()
		p.section = utHeader
		return
	}
	switch p.section {
	case utHeader:
		if m := unittestHeader.FindStringSubmatch(trimmed); m != nil {
			p.failing = unittestName(m[2], m[3])
			p.rep.Add(Test{Name: p.failing, Status: Fail})
			p.section = utDashes
			return
		}
		p.section = utTests
	case utDashes:
		p.section = utMessage
		if isRule(trimmed, '-') {
			return
		}
		fallthrough
	case utMessage:
		if isRule(trimmed, '-') {
			// The rule before "Ran N tests": the last section ends.
			p.endSection()
			return
		}
		if p.msg.String() == "" && unittestRan.MatchString(trimmed) {
			// A section without a message (an unexpected success): its
			// rule was the one before the summary.
			p.endSection()
			p.testLine(line, trimmed)
			return
		}
		p.msg.add(line)
		p.msg.add("\n")
		return
	}
	p.testLine(line, trimmed)
}

// testLine reads a line outside the failure sections.
func (p *unittestReport) testLine(line, trimmed string) {
	if m := unittestRan.FindStringSubmatch(trimmed); m != nil {
		p.ran, _ = strconv.Atoi(m[1])
		p.pending, p.doc = "", ""
		return
	}
	if m := unittestLine.FindStringSubmatch(line); m != nil {
		name, rest := unittestName(m[2], m[3]), m[4]
		sub := m[1] != ""
		switch {
		case strings.TrimSpace(rest) == "" && !sub:
			p.start(name)
			p.doc = name
			return
		case strings.HasPrefix(rest, " ... "):
			p.doc = ""
			p.start(name)
			p.result(name, rest[len(" ... "):])
			return
		case strings.HasPrefix(rest, " (") && strings.Contains(rest, " ... "):
			// A subtest: its parameters, then its result. Its test's
			// line came first, without a result.
			p.doc = ""
			p.start(name)
			p.result(name, rest[strings.Index(rest, " ... ")+len(" ... "):])
			return
		}
	}
	if p.doc != "" {
		// The docstring's line after a test's: "First line. ... ok".
		if i := strings.Index(line, " ... "); i >= 0 {
			name := p.doc
			p.doc = ""
			p.result(name, line[i+len(" ... "):])
			return
		}
	}
	if p.pending != "" {
		if status, ok := unittestResult(trimmed); ok {
			p.rep.Add(Test{Name: p.pending, Status: status})
			p.pending = ""
		}
	}
}

// start gives a test its place in the report.
func (p *unittestReport) start(name string) {
	p.rep.reserve(name)
	p.pending = name
}

// result reads what follows a test's " ... ": its result, or output of
// the test itself, after which the result comes on a line of its own.
// A subtest's line that does not fail leaves its test pending, for the
// result of the test itself.
func (p *unittestReport) result(name, s string) {
	status, ok := unittestResult(s)
	if !ok {
		p.pending = name
		return
	}
	p.rep.Add(Test{Name: name, Status: status})
	if p.pending == name {
		p.pending = ""
	}
}

// endSection gives the failure section read so far to its test.
func (p *unittestReport) endSection() {
	if p.failing != "" {
		msg := strings.TrimSpace(p.msg.String())
		if msg == "" {
			msg = "failed"
		}
		p.rep.Add(Test{Name: p.failing, Status: Fail, Message: msg})
	}
	p.failing, p.msg.b = "", p.msg.b[:0]
	p.section = utTests
}

// isRule reports whether s is a line of at least 20 c, as unittest
// draws between its sections.
func isRule(s string, c byte) bool {
	if len(s) < 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != c {
			return false
		}
	}
	return true
}

// LineMerger writes what two streams of one command print (its stdout
// and its stderr) to one writer, a whole line at a time, so that a line
// of one stream never lands inside a line of the other: unittest prints
// its report on stderr while the tests may print on stdout.
type LineMerger struct {
	mu  sync.Mutex
	w   io.Writer
	err error
	out []*mergedStream
}

// NewLineMerger returns a LineMerger writing to w.
func NewLineMerger(w io.Writer) *LineMerger { return &LineMerger{w: w} }

// Stream returns a writer for one more stream. Writes may come from
// several goroutines, one per stream.
func (m *LineMerger) Stream() io.Writer {
	s := &mergedStream{m: m}
	m.mu.Lock()
	m.out = append(m.out, s)
	m.mu.Unlock()
	return s
}

// Flush writes what each stream printed after its last newline, as a
// line of its own.
func (m *LineMerger) Flush() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.out {
		if len(s.buf) > 0 {
			m.write(append(s.buf, '\n'))
			s.buf = s.buf[:0]
		}
	}
	return m.err
}

// write passes b on; after a failure of w, nothing more is written (the
// reader stopped).
func (m *LineMerger) write(b []byte) {
	if m.err == nil {
		_, m.err = m.w.Write(b)
	}
}

type mergedStream struct {
	m   *LineMerger
	buf []byte // the stream's line under way
}

func (s *mergedStream) Write(b []byte) (int, error) {
	n := len(b)
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			s.buf = append(s.buf, b...)
			if len(s.buf) > MaxLine {
				// A line longer than any reader reads: passed on as it
				// is, the reader skips it.
				s.m.write(s.buf)
				s.buf = s.buf[:0]
			}
			break
		}
		if len(s.buf) > 0 {
			s.buf = append(s.buf, b[:i+1]...)
			s.m.write(s.buf)
			s.buf = s.buf[:0]
		} else {
			s.m.write(b[:i+1])
		}
		b = b[i+1:]
	}
	// The command's output never waits on the report: a reader's failure
	// is not the command's.
	return n, nil
}
