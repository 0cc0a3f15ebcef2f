package testreport

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Statuses of a test.
const (
	Pass = "pass"
	Fail = "fail"
	Skip = "skip"
)

// MaxMessage bounds a failure's message kept, in bytes; MaxMessages
// bounds how many failures of a report keep one (the rest keep "").
const (
	MaxMessage  = 2048
	MaxMessages = 200
)

// MaxLine is the longest line of a go test -json or TAP report read; a
// longer line is skipped whole.
const MaxLine = 1 << 20

// ErrMalformed is wrapped by every error that means the report could not
// be read as its format: the caller then judges the command by its exit
// status alone.
var ErrMalformed = errors.New("malformed test report")

// ErrNoReport is wrapped, along with ErrMalformed, by ReadJUnit's error
// when no file matches the report's path (the command wrote none: it may
// have failed before its tests ran).
var ErrNoReport = errors.New("no report file")

// Test is one test's result.
type Test struct {
	// Name is unique within a Report: "pkg/TestX/sub" for go test -json,
	// the description for TAP, "classname.name" for JUnit.
	Name   string
	Status string // Pass, Fail or Skip
	// Message is, for a failure, the head of its message or output (at
	// most MaxMessage bytes, valid UTF-8); "" otherwise.
	Message string
}

// Report is the tests of one report in order of first appearance, one
// entry per name, and its broken units. A name seen twice keeps its
// first place and its worst result: a failure is never replaced by a
// skip or a pass of the same name, nor a skip by a pass (a test that
// failed once in a report failed, one printed "ok" before its real
// result is judged by that result).
type Report struct {
	Tests []Test
	// Broken are the units whose tests did not run, or not all of them
	// (a package that does not build, a module that could not be
	// collected, a Bail out!), in order of first appearance, one entry
	// per unit. They are not tests: Counts leaves them out.
	Broken []Broken

	index    map[string]int  // Name → position in Tests
	indexed  int             // len(Tests) when index was last brought up to date
	messages int             // failures holding a message
	pending  int             // tests reserved without a result yet (go test -json)
	brokenAt map[string]bool // the units in Broken
}

// Broken is a unit of a report whose tests did not run, or not all of
// them. A reader names the unit as its tool does (the Go package, the
// module or file a collection error is about, "Bail out!" for TAP, the
// suite of a JUnit error outside any test case), so that the same
// breakage on a baseline and after a change has the same name.
type Broken struct {
	Unit string
	// Reason says how it broke, in a few words (BuildFailed,
	// FailedOutside, CollectionError, BailedOut, ErrorOutside).
	Reason string
	// Message is the head of its output, as Test.Message.
	Message string
}

// Reasons of a Broken unit.
const (
	BuildFailed     = "build failed"
	FailedOutside   = "failed outside its tests"
	CollectionError = "collection error"
	BailedOut       = "bailed out"
	ErrorOutside    = "error outside a test"
)

// MaxBroken bounds the broken units a report keeps; past it,
// BrokenUnknown names the rest as one.
const MaxBroken = 10000

// BrokenUnknown is the unit standing for the broken units past MaxBroken.
const BrokenUnknown = "(more broken units)"

// BrokenUnnamed is the unit of a broken one its report gives no name.
const BrokenUnnamed = "(unnamed)"

// AddBroken records a broken unit; a unit already recorded keeps its
// first reason and message.
func (r *Report) AddBroken(b Broken) {
	b.Unit = validUTF8(b.Unit)
	if b.Unit == "" {
		b.Unit = BrokenUnnamed
	}
	if len(r.Broken) >= MaxBroken {
		b = Broken{Unit: BrokenUnknown, Reason: b.Reason}
	}
	if r.brokenAt == nil {
		r.brokenAt = map[string]bool{}
		for _, have := range r.Broken {
			r.brokenAt[have.Unit] = true
		}
	}
	if r.brokenAt[b.Unit] {
		return
	}
	r.brokenAt[b.Unit] = true
	msg := b.Message
	b.Message = ""
	if r.messages < MaxMessages {
		b.Message = clip(msg)
	}
	r.Broken = append(r.Broken, b)
}

// Counts counts the tests by status (the broken units are not tests).
func (r *Report) Counts() (pass, fail, skip int) {
	for _, t := range r.Tests {
		switch t.Status {
		case Pass:
			pass++
		case Fail:
			fail++
		default:
			skip++
		}
	}
	return pass, fail, skip
}

// Failed returns the names of the failing tests, in order.
func (r *Report) Failed() []string {
	var names []string
	for _, t := range r.Tests {
		if t.Status == Fail {
			names = append(names, t.Name)
		}
	}
	return names
}

// Lookup returns the test named name, in constant time: the index behind
// it is kept as tests are added, and rebuilt when Tests was set or
// appended to by hand (names should not be changed in place).
func (r *Report) Lookup(name string) (Test, bool) {
	i, ok := r.find(name)
	if !ok {
		return Test{}, false
	}
	return r.Tests[i], true
}

// find is Lookup's position, with the index brought up to date first.
func (r *Report) find(name string) (int, bool) {
	if r.index == nil || r.indexed != len(r.Tests) {
		r.reindex()
	}
	i, ok := r.index[name]
	if ok && r.Tests[i].Name != name { // renamed by hand
		r.reindex()
		i, ok = r.index[name]
	}
	return i, ok
}

func (r *Report) reindex() {
	r.index = make(map[string]int, len(r.Tests))
	r.indexed = len(r.Tests)
	r.messages, r.pending = 0, 0
	for i, t := range r.Tests {
		if _, dup := r.index[t.Name]; !dup {
			r.index[t.Name] = i
		}
		if t.Message != "" {
			r.messages++
		}
		if t.Status == "" {
			r.pending++
		}
	}
}

// Add records a test's result under the rules of Report: a new name is
// appended; a known one takes the new result only when it is not better
// than the one it has (a second failure keeps the first one's message if
// it had one). The
// message is kept only for a failure, cut to MaxMessage bytes, and only
// while fewer than MaxMessages failures of the report hold one.
func (r *Report) Add(t Test) {
	i, ok := r.find(t.Name)
	if !ok {
		i = r.appendNew(t.Name)
	}
	r.set(i, t.Status, t.Message)
}

// reserve gives name its place without a result (Status ""), for a test
// seen starting; finish settles the ones still without one.
func (r *Report) reserve(name string) int {
	if i, ok := r.find(name); ok {
		return i
	}
	return r.appendNew(name)
}

// appendNew appends a test named name, without a result yet.
func (r *Report) appendNew(name string) int {
	r.Tests = append(r.Tests, Test{Name: name})
	r.index[name] = len(r.Tests) - 1
	r.indexed++
	r.pending++
	return len(r.Tests) - 1
}

// set applies a result to the test at i: its worst result stands (a
// second failure keeps the first one's message when it had one).
func (r *Report) set(i int, status, msg string) {
	t := &r.Tests[i]
	switch {
	case rank(status) < rank(t.Status):
		return
	case t.Status == Fail && t.Message != "":
		return
	case t.Status == "" && status != "":
		if r.pending > 0 {
			r.pending--
		}
	}
	t.Status = status
	if t.Message != "" {
		r.messages--
		t.Message = ""
	}
	if status == Fail && r.messages < MaxMessages {
		t.Message = clip(msg)
		if t.Message != "" {
			r.messages++
		}
	}
}

// rank orders results from the best to the worst: none yet, pass, skip,
// fail.
func rank(status string) int {
	switch status {
	case Pass:
		return 1
	case Skip:
		return 2
	case Fail:
		return 3
	}
	return 0
}

// finish gives every test still without a result the status Fail and
// the message msg(i), i its position.
func (r *Report) finish(msg func(i int) string) {
	if r.pending == 0 {
		return
	}
	for i := range r.Tests {
		if r.Tests[i].Status == "" {
			r.set(i, Fail, msg(i))
		}
	}
	r.pending = 0
}

// clip returns the head of s that a Test keeps: at most MaxMessage
// bytes, cut at a character boundary, valid UTF-8, without trailing
// blank space.
func clip(s string) string {
	s = validUTF8(s) // before the cut: "\uFFFD" is longer than the byte it replaces
	if len(s) > MaxMessage {
		n := MaxMessage
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	return strings.TrimRight(s, " \t\r\n")
}

func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// malformed is an error wrapping ErrMalformed.
func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// errNoTests is the error of a report that holds no test and no broken
// unit.
var errNoTests = malformed("no tests in the report")

// empty reports whether r holds neither a test nor a broken unit.
func (r *Report) empty() bool { return len(r.Tests) == 0 && len(r.Broken) == 0 }

// Parse reads a report of kind f.Kind from r, streaming: memory grows
// with the number of distinct tests (their names and bounded messages),
// not with the report's size. GoJSON and TAP are what a command prints;
// a JUnit document can be read from r as well (ReadJUnit reads the
// files f.Path names).
func Parse(f Format, r io.Reader) (*Report, error) {
	switch f.Kind {
	case GoJSON:
		return ParseGoJSON(r)
	case TAP:
		return ParseTAP(r)
	case JUnit:
		return ParseJUnit(r)
	case Unittest:
		return ParseUnittest(r)
	}
	return nil, fmt.Errorf("testreport: no parser for report kind %q", f.Kind)
}
