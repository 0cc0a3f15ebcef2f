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
	// pkgs are the packages seen, in order, each with what is known of
	// it; testPkg the package of each test still without a result.
	pkgs    []*goPackage
	pkgAt   map[string]*goPackage
	testPkg map[string]*goPackage
	// builds are the ImportPaths of the builds that failed; a package
	// failing because of one names it (FailedBuild).
	builds []string
	// Output of the tests and packages still running (package-level
	// output under the package's name), and of the builds under their
	// ImportPath; each dropped when its result comes.
	out     map[string]*head
	build   map[string]*head
	free    []*head // heads dropped, for reuse
	scratch []byte
}

// goPackage is what a go test -json report said of one package.
type goPackage struct {
	name    string
	started bool   // its start was seen
	ended   bool   // it got its pass, skip or fail
	failed  bool   // its fail
	failing bool   // one of its tests failed, or has no result
	build   string // the build whose failure failed it (FailedBuild)
	msg     string // the head of its output, when it failed
}

// ParseGoJSON reads the output of `go test -json`, streaming. A test is
// named "Package/Test" (a subtest "Package/TestX/sub"). A package is not
// a test: one that did not build (its fail names the failed build), or
// failed with none of its tests failing (its TestMain, an init that
// panics, a setup that failed), or started and never ended, is a Broken
// unit named after it; a package that passed, or has no test files,
// adds nothing. Lines that are not test2json events are skipped (go test
// -json interleaves the build's own output). A test that started and got
// no result is a failure whose message begins with NoResult.
func ParseGoJSON(r io.Reader) (*Report, error) {
	p := &goJSON{rep: &Report{}, out: map[string]*head{}, build: map[string]*head{},
		pkgAt: map[string]*goPackage{}, testPkg: map[string]*goPackage{}}
	l := newLines(r)
	var ev event
	err := l.each(func(line []byte) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			return
		}
		if line[0] != '{' || !p.decodeEvent(line, &ev) || ev.Action == "" {
			if p.badAt == 0 {
				p.badAt = l.n
			}
			return
		}
		p.events++
		p.handle(&ev)
	})
	if err != nil {
		return nil, err
	}
	for _, pkg := range p.testPkg {
		pkg.failing = true // its test fails with NoResult
	}
	p.rep.finish(func(i int) string {
		name := p.rep.Tests[i].Name
		if o := p.out[name].String(); o != "" {
			return NoResult + "\n" + o
		}
		return NoResult
	})
	p.brokenPackages()
	switch {
	case p.events == 0 && p.badAt > 0:
		return nil, malformed("no go test -json event in the report (line %d is not one)", p.badAt)
	case p.rep.empty():
		return nil, errNoTests
	}
	return p.rep, nil
}

// brokenPackages adds the packages that broke to the report: those whose
// build failed, those that failed (or never ended) with none of their
// tests failing, then the failed builds no package named.
func (p *goJSON) brokenPackages() {
	named := map[string]bool{}
	for _, pkg := range p.pkgs {
		switch {
		case pkg.build != "":
			named[pkg.build] = true
			msg := p.build[pkg.build].String()
			if buildPackage(pkg.build) != pkg.name {
				msg = "the build of " + pkg.build + " failed\n" + msg
			}
			if msg == "" {
				msg = pkg.msg
			}
			p.rep.AddBroken(Broken{Unit: pkg.name, Reason: BuildFailed, Message: msg})
		case pkg.failing:
		case pkg.failed:
			reason := FailedOutside
			if strings.Contains(pkg.msg, "[build failed]") || strings.Contains(pkg.msg, "[setup failed]") {
				reason = BuildFailed // before Go 1.24, a fail without FailedBuild
			}
			p.rep.AddBroken(Broken{Unit: pkg.name, Reason: reason, Message: pkg.msg})
		case pkg.started && !pkg.ended:
			msg := NoResult
			if o := p.out[pkg.name].String(); o != "" {
				msg += "\n" + o
			}
			p.rep.AddBroken(Broken{Unit: pkg.name, Reason: FailedOutside, Message: msg})
		}
	}
	for _, ip := range p.builds {
		if !named[ip] {
			p.rep.AddBroken(Broken{Unit: validUTF8(buildPackage(ip)), Reason: BuildFailed, Message: p.build[ip].String()})
		}
	}
}

// pkg returns the package named name, known from now on.
func (p *goJSON) pkg(name string) *goPackage {
	pkg := p.pkgAt[name]
	if pkg == nil {
		if len(p.pkgs) >= MaxBroken*4 {
			return &goPackage{name: name} // not kept: a report of that many packages is not one to judge by
		}
		pkg = &goPackage{name: name}
		p.pkgAt[name] = pkg
		p.pkgs = append(p.pkgs, pkg)
	}
	return pkg
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
		if ev.ImportPath != "" && len(p.builds) < MaxBroken {
			p.builds = append(p.builds, ev.ImportPath)
		}
		return
	}
	if ev.Test == "" {
		if ev.Package != "" {
			p.packageEvent(ev)
		}
		return
	}
	name := ev.Test
	if ev.Package != "" {
		name = ev.Package + "/" + ev.Test
	}
	name = validUTF8(name)
	switch ev.Action {
	case "start", "run":
		i := p.rep.reserve(name)
		if ev.Package != "" && p.rep.Tests[i].Status == "" {
			p.testPkg[name] = p.pkg(validUTF8(ev.Package))
		}
	case "output":
		if framing(ev.Output) {
			return
		}
		// Kept while the test has no result.
		if i, ok := p.rep.find(name); ok && p.rep.Tests[i].Status == "" {
			p.keep(p.out, name, ev.Output)
		}
	case "pass", "skip", "fail":
		status := ev.Action
		msg := ""
		if status == Fail {
			msg = p.out[name].String()
			if ev.Package != "" {
				p.pkg(validUTF8(ev.Package)).failing = true
			}
		}
		p.rep.Add(Test{Name: name, Status: status, Message: msg})
		delete(p.testPkg, name)
		p.drop(name)
	}
}

// packageEvent reads an event of a package itself (no Test).
func (p *goJSON) packageEvent(ev *event) {
	name := validUTF8(ev.Package)
	pkg := p.pkg(name)
	switch ev.Action {
	case "start":
		pkg.started = true
	case "output":
		if !pkg.ended {
			p.keep(p.out, name, ev.Output)
		}
	case "pass", "skip", "fail":
		pkg.ended = true
		if ev.Action == Fail {
			pkg.failed, pkg.build = true, ev.FailedBuild
			pkg.msg = p.out[name].String()
		}
		p.drop(name)
	}
}

// drop forgets the output kept under name.
func (p *goJSON) drop(name string) {
	if h := p.out[name]; h != nil {
		delete(p.out, name)
		if len(p.free) < 64 {
			h.b = h.b[:0]
			p.free = append(p.free, h)
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
// An import path that names no package that way is itself.
func buildPackage(importPath string) string {
	p, _, _ := strings.Cut(importPath, " [")
	p = strings.TrimSuffix(p, ".test")
	if p = strings.TrimSuffix(p, "_test"); p == "" {
		return importPath
	}
	return p
}
