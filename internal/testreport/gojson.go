package testreport

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// NoResult is the head of the message of a test that started and never
// got its pass, fail or skip (the run was killed, or timed out): the
// test's output follows it.
const NoResult = "no result (the run ended before this test finished)"

// event is one test2json event (`go doc test2json`), with the fields the
// report needs; ImportPath is set on the build events of Go 1.24 and
// later.
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	ImportPath  string
	FailedBuild string
}

// goJSON is the state of a go test -json report being read.
type goJSON struct {
	rep    *Report
	events int // lines read as test2json events
	badAt  int // first line that is not an event, for the error
	// Output of the tests and packages still running (package-level
	// output under the package's name), and of the builds under their
	// ImportPath; each dropped when its result comes.
	out     map[string]*head
	build   map[string]*head
	free    []*head // heads dropped, for reuse
	scratch []byte
}

// ParseGoJSON reads the output of `go test -json`, streaming. A test is
// named "Package/Test" (a subtest "Package/TestX/sub"); a package's own
// result (its pass, its failure to build, a failure outside any test, no
// test files: skip) is the test named "Package". Lines that are not
// test2json events are skipped (go test -json interleaves the build's
// own output). A test that started and got no result is a failure whose
// message begins with NoResult.
func ParseGoJSON(r io.Reader) (*Report, error) {
	p := &goJSON{rep: &Report{}, out: map[string]*head{}, build: map[string]*head{}}
	l := newLines(r)
	var ev event
	for {
		line, err := l.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' || !p.decodeEvent(line, &ev) || ev.Action == "" {
			if p.badAt == 0 {
				p.badAt = l.n
			}
			continue
		}
		p.events++
		p.handle(&ev)
	}
	p.rep.finish(func(i int) string {
		name := p.rep.Tests[i].Name
		if o := p.out[name].String(); o != "" {
			return NoResult + "\n" + o
		}
		return NoResult
	})
	switch {
	case p.events == 0 && p.badAt > 0:
		return nil, malformed("no go test -json event in the report (line %d is not one)", p.badAt)
	case len(p.rep.Tests) == 0:
		return nil, errNoTests
	}
	return p.rep, nil
}

// decodeEvent reads a line as a test2json event.
func (p *goJSON) decodeEvent(line []byte, ev *event) bool {
	if scanEvent(line, ev, &p.scratch) {
		return true
	}
	*ev = event{}
	return json.Unmarshal(line, ev) == nil
}

func (p *goJSON) handle(ev *event) {
	switch ev.Action {
	case "build-output":
		p.keep(p.build, ev.ImportPath, ev.Output)
		return
	case "build-fail":
		if pkg := buildPackage(ev.ImportPath); pkg != "" {
			p.rep.Add(Test{Name: validUTF8(pkg), Status: Fail, Message: p.build[ev.ImportPath].String()})
		}
		delete(p.build, ev.ImportPath)
		return
	}
	name := ev.Package
	switch {
	case ev.Test != "" && ev.Package != "":
		name = ev.Package + "/" + ev.Test
	case ev.Test != "":
		name = ev.Test
	case ev.Package == "":
		return
	}
	name = validUTF8(name)
	switch ev.Action {
	case "start", "run":
		p.rep.reserve(name)
	case "output":
		if ev.Test != "" && framing(ev.Output) {
			return
		}
		// Kept while the test (or package) has no result; a package's
		// output is kept too when the stream has no "start" for it.
		if i, ok := p.rep.find(name); ok && p.rep.Tests[i].Status == "" || !ok && ev.Test == "" {
			p.keep(p.out, name, ev.Output)
		}
	case "pass", "skip", "fail":
		status := ev.Action
		msg := ""
		if status == Fail {
			msg = p.out[name].String()
			if ev.Test == "" && ev.FailedBuild != "" && msg == "" {
				msg = "build failed: " + ev.FailedBuild
			}
		}
		p.rep.Add(Test{Name: name, Status: status, Message: msg})
		if h := p.out[name]; h != nil {
			delete(p.out, name)
			if len(p.free) < 64 {
				h.b = h.b[:0]
				p.free = append(p.free, h)
			}
		}
	}
}

// keep adds s to the output kept under key, within MaxMessage bytes and
// for at most MaxMessages keys at once beyond those already there.
func (p *goJSON) keep(m map[string]*head, key, s string) {
	h := m[key]
	if h == nil {
		if len(m) >= 4*MaxMessages && p.rep.messages >= MaxMessages {
			return // no failure could keep it anyway
		}
		if n := len(p.free); n > 0 {
			h, p.free = p.free[n-1], p.free[:n-1]
		} else {
			h = &head{}
		}
		m[key] = h
	}
	h.add(s)
}

// framing reports whether an output line of a test is go test's framing
// ("=== RUN", "--- FAIL: ...") rather than what the test printed.
func framing(s string) bool {
	s = strings.TrimLeft(s, " \t")
	for _, p := range [...]string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- FAIL:", "--- PASS:", "--- SKIP:"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// buildPackage is the package an ImportPath of a build event names:
// "example.com/p [example.com/p.test]", "example.com/p_test [...]" and
// "example.com/p.test" are all "example.com/p".
func buildPackage(importPath string) string {
	p, _, _ := strings.Cut(importPath, " [")
	p = strings.TrimSuffix(p, ".test")
	return strings.TrimSuffix(p, "_test")
}
