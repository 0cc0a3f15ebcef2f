package scaffold

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/lazyregexp"
)

// Kinds of project Detect recognises, in the order it prefers them when a
// repository is more than one.
const (
	KindGo     = "go"
	KindPython = "python"
	KindNode   = "node"
	KindRust   = "rust"
	KindMake   = "make"
)

// Kinds lists the kinds in the order Detect prefers them.
var Kinds = []string{KindGo, KindPython, KindNode, KindRust, KindMake}

// Flavours of a kind: the test tool its guard runs.
const (
	FlavourPytest   = "pytest"
	FlavourUnittest = "unittest"
	FlavourNodeTest = "node --test" // package.json's test script is node's own runner
	FlavourNPM      = "npm test"
)

// Found is one kind of project recognised at the repository root.
type Found struct {
	// Kind is one of Kinds.
	Kind string
	// Flavour tells Python's pytest from unittest and Node's own test
	// runner from any other; "" for the other kinds.
	Flavour string
	// Evidence names the files at the root that gave the kind away, e.g.
	// "go.mod" or "package.json".
	Evidence []string
}

// Name is the kind's name in messages: "Go", "Python", ...
func (f Found) Name() string { return kindName(f.Kind) }

func kindName(kind string) string {
	switch kind {
	case KindGo:
		return "Go"
	case KindPython:
		return "Python"
	case KindNode:
		return "Node"
	case KindRust:
		return "Rust"
	case KindMake:
		return "Make"
	}
	return kind
}

// Guard is the [[guard]] Init writes for a project: its keys besides
// timeout and output_limit, which are the example's.
type Guard struct {
	Name   string
	Run    string
	Report string // "" for none
}

// Project is what Detect recognised in a repository and what Init writes
// for it.
type Project struct {
	// Found lists every kind recognised, in the order of Kinds; the first
	// one is used. Empty: nothing recognised, the generic example.
	Found []Found
	// Guard is the guard config.toml gets.
	Guard Guard
	// Notes are advice for the user, one sentence each: for example that
	// the folder the guard writes its report to should be in .gitignore.
	Notes []string

	// Facts about the repository that shape the guard: tests/ holds
	// test_*.py files without an __init__.py (unittest discovery then
	// starts there), and the node --test script's arguments.
	unittestStart string
	nodeTestArgs  string
}

// Kind is the kind used, "" for the generic example.
func (p Project) Kind() string {
	if len(p.Found) == 0 {
		return ""
	}
	return p.Found[0].Kind
}

// Flavour is the flavour of the kind used.
func (p Project) Flavour() string {
	if len(p.Found) == 0 {
		return ""
	}
	return p.Found[0].Flavour
}

// Recognised says in one line what was recognised, e.g. `a Python
// project (pytest), from pyproject.toml; also found Make (Makefile), not
// used`.
func (p Project) Recognised() string {
	if len(p.Found) == 0 {
		return "no Go, Python, Node, Rust or Make project at the root: wrote a neutral example, without a guard"
	}
	f := p.Found[0]
	var b strings.Builder
	b.WriteString(article(f.Name()) + " " + f.Name() + " project")
	if f.Flavour != "" {
		b.WriteString(" (" + f.Flavour + ")")
	}
	b.WriteString(", from " + strings.Join(f.Evidence, ", "))
	if len(p.Found) > 1 {
		var also []string
		for _, o := range p.Found[1:] {
			also = append(also, o.Name()+" ("+strings.Join(o.Evidence, ", ")+")")
		}
		b.WriteString("; also found " + strings.Join(also, ", ") + ", not used: " + f.Name() + " comes first")
	}
	return b.String()
}

func article(name string) string {
	if name == "" {
		return "a"
	}
	switch name[0] {
	case 'A', 'E', 'I', 'O', 'U':
		return "an"
	}
	return "a"
}

// GuardLine says in one line the guard written, e.g. `guard "test" runs
// go test -json ./..., report go-json`.
func (p Project) GuardLine() string {
	if p.Kind() == "" {
		return "no guard: write one in " + Dir + "/config.toml (see the note below)"
	}
	s := "guard " + quoteName(p.Guard.Name) + " runs " + p.Guard.Run
	if p.Guard.Report != "" {
		return s + ", report " + p.Guard.Report
	}
	return s + ", no report: a suite that fails when a run starts stops that run before any agent works " +
		"(its comment in " + Dir + "/config.toml says how to get a report)"
}

func quoteName(s string) string { return `"` + s + `"` }

// maxMarkerSize bounds what Detect reads of one file.
const maxMarkerSize = 1 << 20

// Detect recognises the kind of project at root from the files there:
//
//   - Go: go.mod.
//   - Python: pyproject.toml, setup.py, setup.cfg, requirements.txt,
//     pytest.ini, tox.ini, test_*.py files at the root or a tests/ folder
//     with test_*.py files; tested
//     with pytest when pytest.ini or a conftest.py exists or when
//     pyproject.toml, setup.cfg, setup.py, tox.ini or a requirements file
//     mentions pytest, else with unittest.
//   - Node: package.json with a "test" script (not npm's placeholder that
//     only fails).
//   - Rust: Cargo.toml.
//   - Make: a Makefile (GNUmakefile, makefile) with a test target.
//
// A file that cannot be read counts as absent. Detect never fails: what it
// cannot recognise gets the generic example.
func Detect(root string) Project {
	d := detector{root: root}
	var p Project
	if d.isFile("go.mod") {
		p.Found = append(p.Found, Found{Kind: KindGo, Evidence: []string{"go.mod"}})
	}
	if f, ok := d.python(&p); ok {
		p.Found = append(p.Found, f)
	}
	if f, ok := d.node(&p); ok {
		p.Found = append(p.Found, f)
	}
	if d.isFile("Cargo.toml") {
		p.Found = append(p.Found, Found{Kind: KindRust, Evidence: []string{"Cargo.toml"}})
	}
	if f, ok := d.make(); ok {
		p.Found = append(p.Found, f)
	}
	p.Guard = guardFor(p)
	p.Notes = d.notes(p)
	return p
}

type detector struct {
	root string
}

func (d detector) path(rel string) string { return filepath.Join(d.root, filepath.FromSlash(rel)) }

// isFile reports whether rel is a regular file (a symbolic link to one
// counts).
func (d detector) isFile(rel string) bool {
	info, err := os.Stat(d.path(rel))
	return err == nil && info.Mode().IsRegular()
}

// read returns rel's content, nil when it is missing, not a regular file,
// unreadable or larger than maxMarkerSize. A named pipe is refused without
// waiting for a writer.
func (d detector) read(rel string) []byte {
	data, err := fsutil.ReadLimited(d.path(rel), maxMarkerSize, false)
	if err != nil {
		return nil
	}
	return data
}

func (d detector) mentions(rel, word string) bool {
	return strings.Contains(strings.ToLower(string(d.read(rel))), word)
}

// glob lists the regular files at root matching pattern (path.Match
// syntax, slash-separated), sorted.
func (d detector) glob(pattern string) []string {
	dir, base := path.Split(pattern)
	entries, err := os.ReadDir(d.path(strings.TrimSuffix(dir, "/")))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if ok, _ := path.Match(base, e.Name()); ok && d.isFile(dir+e.Name()) {
			out = append(out, dir+e.Name())
		}
	}
	return out
}

func (d detector) python(p *Project) (Found, bool) {
	f := Found{Kind: KindPython}
	for _, name := range []string{"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "pytest.ini", "tox.ini"} {
		if d.isFile(name) {
			f.Evidence = append(f.Evidence, name)
		}
	}
	tests := d.glob("tests/test_*.py")
	if len(tests) > 0 {
		f.Evidence = append(f.Evidence, "tests/test_*.py")
	}
	if len(d.glob("test_*.py")) > 0 {
		f.Evidence = append(f.Evidence, "test_*.py")
	}
	if len(f.Evidence) == 0 {
		return Found{}, false
	}
	pytest := d.isFile("pytest.ini") || d.isFile("conftest.py") || d.isFile("tests/conftest.py")
	for _, name := range []string{"pyproject.toml", "setup.cfg", "setup.py", "tox.ini"} {
		pytest = pytest || d.mentions(name, "pytest")
	}
	reqs := append(d.glob("requirements*.txt"), d.glob("*requirements.txt")...)
	reqs = append(reqs, d.glob("requirements/*.txt")...)
	for _, name := range reqs {
		pytest = pytest || d.mentions(name, "pytest")
	}
	if pytest {
		f.Flavour = FlavourPytest
		return f, true
	}
	f.Flavour = FlavourUnittest
	// unittest discovery from the root finds tests/ only as a package;
	// without tests/__init__.py it has to start in tests/ (python -m keeps
	// the root importable).
	if len(tests) > 0 && !d.isFile("tests/__init__.py") {
		p.unittestStart = "tests"
	}
	return f, true
}

// npmPlaceholder is the test script `npm init` writes, which only fails.
const npmPlaceholder = "no test specified"

// nodeTestScript matches a test script that only runs node's own test
// runner, with plain arguments (files, globs, flags) and no reporter.
var nodeTestScript = lazyregexp.New(`^node --test((?: [A-Za-z0-9_./*@=:,+-]+)*)$`)

func (d detector) node(p *Project) (Found, bool) {
	data := d.read("package.json")
	if data == nil {
		return Found{}, false
	}
	var pkg struct {
		Scripts map[string]any `json:"scripts"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return Found{}, false
	}
	test, _ := pkg.Scripts["test"].(string)
	test = strings.Join(strings.Fields(test), " ")
	if test == "" || strings.Contains(test, npmPlaceholder) {
		return Found{}, false
	}
	f := Found{Kind: KindNode, Flavour: FlavourNPM, Evidence: []string{"package.json"}}
	_, pre := pkg.Scripts["pretest"]
	_, post := pkg.Scripts["posttest"]
	if m := nodeTestScript.FindStringSubmatch(test); m != nil && !pre && !post && !strings.Contains(m[1], "--test-reporter") {
		// Run directly: npm would print its own lines among the TAP on
		// stdout. With pretest or posttest scripts npm test stays, to run
		// them.
		f.Flavour = FlavourNodeTest
		p.nodeTestArgs = m[1]
	}
	return f, true
}

// makeTestTarget matches a rule line whose targets include test.
var makeTestTarget = lazyregexp.New(`^(?:[^\s:=#][^:=#]*\s)?test(?:\s[^:=#]*)?::?(?:[^=]|$)`)

func (d detector) make() (Found, bool) {
	// GNU make reads the first of these that exists.
	for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} {
		if !d.isFile(name) {
			continue
		}
		for _, line := range strings.Split(string(d.read(name)), "\n") {
			if makeTestTarget.MatchString(line) {
				return Found{Kind: KindMake, Evidence: []string{name}}, true
			}
		}
		return Found{}, false
	}
	return Found{}, false
}

// notes advises the user about what Init cannot do itself: the JUnit
// report a guard writes must not be committed with a task, and Init does
// not touch the repository's own .gitignore.
func (d detector) notes(p Project) []string {
	if p.Kind() == "" {
		return []string{neutralNote}
	}
	var notes []string
	if p.Flavour() == FlavourPytest && !pytestInstalled(d.root) {
		notes = append(notes, "pytest is not installed for python3 here (python3 -m pytest fails): install it "+
			"(python3 -m pip install pytest, or name your virtualenv's interpreter in the guard) before `runner run`, "+
			"or its preflight stops the run")
	}
	if !strings.HasPrefix(p.Guard.Report, "junit:") {
		return notes
	}
	if ignored(d.read(".gitignore"), ReportDir+"/junit.xml") {
		return notes
	}
	top := strings.SplitN(ReportDir, "/", 2)[0]
	if d.isFile(".gitignore") {
		return append(notes, "add "+top+"/ to .gitignore: the guard writes its report to "+ReportDir+"/, which would otherwise be committed with each task")
	}
	return append(notes, "create a .gitignore with the line "+top+"/: the guard writes its report to "+ReportDir+"/, which would otherwise be committed with each task")
}

// ignored reports whether the patterns of a .gitignore ignore rel (a file
// path, slash-separated) or one of its folders. It reads the common forms
// (name, /name, dir/, dir/sub, globs, !negation; the last match wins), not
// every rule of gitignore(5).
func ignored(gitignore []byte, rel string) bool {
	parts := strings.Split(rel, "/")
	var prefixes []string
	for i := range parts {
		prefixes = append(prefixes, strings.Join(parts[:i+1], "/"))
	}
	result := false
	for _, line := range strings.Split(string(gitignore), "\n") {
		pat := strings.TrimSpace(line)
		if pat == "" || strings.HasPrefix(pat, "#") {
			continue
		}
		neg := strings.HasPrefix(pat, "!")
		pat = strings.TrimPrefix(pat, "!")
		pat = strings.TrimSuffix(strings.TrimSuffix(pat, "/**"), "/")
		pat = strings.TrimPrefix(pat, "**/")
		anchored := strings.Contains(pat, "/")
		pat = strings.TrimPrefix(pat, "/")
		if pat == "" {
			continue
		}
		match := false
		if anchored {
			for _, pre := range prefixes {
				if ok, _ := path.Match(pat, pre); ok {
					match = true
				}
			}
		} else {
			for _, part := range parts {
				if ok, _ := path.Match(pat, part); ok {
					match = true
				}
			}
		}
		if match {
			result = !neg
		}
	}
	return result
}
