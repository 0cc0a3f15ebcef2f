package scaffold

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"

	runner "github.com/runner-cli/runner"
	"github.com/runner-cli/runner/internal/config"
)

// ReportDir is where the guards and checks Init writes put the JUnit
// reports they produce, relative to the repository root. It lies outside
// .runner/, which the agent may not write to, and under build/, which
// most Python repositories ignore already; Init tells the user to ignore
// it when the repository's .gitignore does not.
const ReportDir = "build/test-reports"

// The guard's name in every kind, as in the example.
const guardName = "test"

// genericGuard is the guard of the embedded example config.toml.
var genericGuard = Guard{Name: guardName, Run: "go test ./..."}

// guardFor chooses the guard of p's kind.
func guardFor(p Project) Guard {
	g := Guard{Name: guardName}
	switch p.Kind() {
	case KindGo:
		g.Run, g.Report = "go test -json ./...", "go-json"
	case KindPython:
		if p.Flavour() == FlavourPytest {
			g.Run = "python3 -m pytest -q --junitxml=" + ReportDir + "/junit.xml"
			g.Report = "junit:" + ReportDir + "/junit.xml"
		} else {
			g.Run = "python3 -m unittest discover -v"
			if p.unittestStart != "" {
				g.Run += " -s " + p.unittestStart
			}
		}
	case KindNode:
		if p.Flavour() == FlavourNodeTest {
			g.Run, g.Report = "node --test --test-reporter=tap"+p.nodeTestArgs, "tap"
		} else {
			g.Run = "npm test"
		}
	case KindRust:
		g.Run = "cargo test"
	case KindMake:
		g.Run = "make test"
	default:
		return genericGuard
	}
	return g
}

// variant names the example tree and guard comment of p: the kind, or
// for Python and Node the flavour.
func variant(p Project) string {
	switch p.Kind() {
	case KindPython, KindNode:
		return p.Flavour()
	}
	return p.Kind()
}

// variants are every variant with an example of its own.
var variants = []string{KindGo, FlavourPytest, FlavourUnittest, FlavourNodeTest, FlavourNPM, KindRust, KindMake}

// A regression, in every comment: what a report adds to an exit status.
const perTest = "one result per test, so a failure names its tests and a test that " +
	"passed on the checkpoint and fails now is named as a regression."

// guardComments are the comments written above the guard's run line, per
// variant, without their "# ": prose is wrapped (see wrap), lines that
// begin with two spaces are kept as they are.
var guardComments = map[string]string{
	KindGo: `Recognised a Go module (go.mod). go test -json prints one JSON event
per test on stdout, which report = "go-json" reads: ` + perTest,

	FlavourPytest: `Recognised a Python project tested with pytest. --junitxml writes a
JUnit XML report, which report = "junit:PATH" reads: ` + perTest + `
The report goes to ` + ReportDir + `/, outside .runner/ (which the agent
may not write to): keep build/ in the repository's .gitignore so that
no report is committed with a task. In a virtualenv, name its interpreter
(".venv/bin/python -m pytest ...") or the tool that runs it
("uv run pytest ...", "poetry run pytest ...").`,

	FlavourUnittest: `Recognised a Python project tested with unittest (nothing mentions
pytest). unittest prints no report a guard can read: the exit status
alone judges, and a failure cannot name its tests. A report makes
regressions nameable per test (a test that passed on the checkpoint and
fails now), for example with pytest, which runs unittest tests too:
  run = "python3 -m pytest -q --junitxml=` + ReportDir + `/junit.xml"
  report = "junit:` + ReportDir + `/junit.xml"
or with unittest-xml-reporting (pip install unittest-xml-reporting):
  run = "mkdir -p ` + ReportDir + ` && python3 -m xmlrunner discover --output-file ` + ReportDir + `/junit.xml"
  report = "junit:` + ReportDir + `/junit.xml"
and build/ in the repository's .gitignore, so that no report is
committed with a task. In a virtualenv, name its interpreter
(".venv/bin/python -m unittest ...").`,

	FlavourNodeTest: `Recognised a Node project whose test script runs node's own test
runner (node --test). --test-reporter=tap prints TAP on stdout, which
report = "tap" reads: ` + perTest + `
The script is run directly: npm test would print its own lines on
stdout among the TAP.`,

	FlavourNPM: `Recognised a Node project (package.json has a test script). npm test
prints what the test runner prints, no report a guard can read: the
exit status alone judges, and a failure cannot name its tests. A report
makes regressions nameable per test, for example with node's own
runner (node --test):
  run = "node --test --test-reporter=tap"
  report = "tap"
or with jest and jest-junit (npm install --save-dev jest-junit):
  run = "JEST_JUNIT_OUTPUT_DIR=` + ReportDir + ` npx jest --ci --reporters=default --reporters=jest-junit"
  report = "junit:` + ReportDir + `/junit.xml"
(vitest: --reporter=junit with --outputFile), with build/ in the
repository's .gitignore so that no report is committed with a task.`,

	KindRust: `Recognised a Rust project (Cargo.toml). cargo test prints no report a
guard can read: the exit status alone judges, and a failure cannot name
its tests. cargo-nextest writes JUnit XML, which makes regressions
nameable per test: with
  [profile.ci.junit]
  path = "junit.xml"
in .config/nextest.toml, write
  run = "cargo nextest run --profile ci"
  report = "junit:target/nextest/ci/junit.xml"`,

	KindMake: `Recognised a Makefile with a test target. make test prints what its
commands print, no report a guard can read: the exit status alone
judges, and a failure cannot name its tests. If the target runs a tool
that can write one (go test -json, pytest --junitxml, node --test
--test-reporter=tap, cargo nextest), run that tool here instead, with
report = "go-json", "tap" or "junit:PATH".`,
}

// exampleChecks are the checks of the example tree's checked leaf, per
// variant: the kind's test command on one placeholder file or package.
var exampleChecks = map[string]exampleCheck{
	KindGo:          {Name: "unit", Run: "go test -json ./path/to/your/package/", Report: "go-json"},
	FlavourPytest:   {Name: "unit", Run: "python3 -m pytest -q --junitxml=" + ReportDir + "/unit.xml tests/test_your_module.py", Report: "junit:" + ReportDir + "/unit.xml"},
	FlavourUnittest: {Name: "unit", Run: "python3 -m unittest -v tests/test_your_module.py"},
	FlavourNodeTest: {Name: "unit", Run: "node --test --test-reporter=tap test/your-module.test.js", Report: "tap"},
	FlavourNPM:      {Name: "unit", Run: "npm test -- test/your-module.test.js"},
	KindRust:        {Name: "unit", Run: "cargo test your_module::"},
	KindMake:        {Name: "unit", Run: "make test TESTS=path/to/your/tests"},
}

// testCommands are the kind's test command in the example tree's
// acceptance lines.
var testCommands = map[string]string{
	KindGo:          "go test ./...",
	FlavourPytest:   "python3 -m pytest",
	FlavourUnittest: "python3 -m unittest discover",
	FlavourNodeTest: "node --test",
	FlavourNPM:      "npm test",
	KindRust:        "cargo test",
	KindMake:        "make test",
}

// exampleNode is a tree.json node as the example trees write it: the
// human-owned fields, checks included, in the order of tree.Marshal's
// canonical form, so that a tree rewritten by the runner before anything
// in it changed still reads as the example.
type exampleNode struct {
	ID          string         `json:"id"`
	Title       string         `json:"title"`
	Goal        string         `json:"goal,omitempty"`
	Acceptance  []string       `json:"acceptance,omitempty"`
	Checks      []exampleCheck `json:"checks,omitempty"`
	DependsOn   []string       `json:"depends_on,omitempty"`
	MaxAttempts int            `json:"max_attempts,omitempty"`
	Children    []*exampleNode `json:"children,omitempty"`
}

// exampleCheck is one of a node's checks: a guard's keys, timeout and
// output_limit left to their defaults.
type exampleCheck struct {
	Name   string `json:"name"`
	Run    string `json:"run"`
	Report string `json:"report,omitempty"`
}

// ExampleTitle is the example trees' root title: it says the tree is
// there to be replaced.
const ExampleTitle = "Example project (replace this tree with your own)"

// exampleTree writes the example tree.json of a variant: a root saying
// how to write a tree, a first leaf, and a leaf judged by a check of its
// own that runs the kind's test command on a placeholder path.
func exampleTree(v string) []byte {
	check, cmd := exampleChecks[v], testCommands[v]
	root := &exampleNode{
		ID:    "project",
		Title: ExampleTitle,
		Goal: "Replace this tree with your project's tasks: one leaf per piece of work, each small enough for one agent run, " +
			"its goal saying what should be true once it is done. runner works on the leaves in order; " +
			"a node with children is done when all its children are done.",
		Acceptance: []string{"the guards of .runner/config.toml pass"},
		Children: []*exampleNode{
			{
				ID:    "first-task",
				Title: "First task (an example: write your own)",
				Goal: "Say what should change, as you would to a colleague new to the code: the behaviour wanted, " +
					"where it lives, what must keep working.",
				Acceptance: []string{
					"one line per fact that shows the work is done",
					cmd + " passes",
				},
			},
			{
				ID:    "checked-task",
				Title: "A task with a check of its own (an example: write your own)",
				Goal: "Its checks judge this task only, besides the guards: here the tests of the code it changes, " +
					"at a placeholder path to replace. A check with a report names the tests that fail, " +
					"and the next attempt is told which.",
				Acceptance: []string{
					"the new behaviour has tests of its own",
					cmd + " passes",
				},
				DependsOn:   []string{"first-task"},
				MaxAttempts: 5,
				Checks:      []exampleCheck{check},
			},
		},
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(struct {
		Version int          `json:"version"`
		Root    *exampleNode `json:"root"`
	}{1, root}); err != nil {
		panic(err) // plain structs of strings always encode
	}
	return b.Bytes()
}

// exampleTrees are every tree.json Init can write, normalised: the
// embedded example's and each variant's.
var exampleTrees = sync.OnceValue(func() [][]byte {
	var out [][]byte
	if data, err := runner.Example.ReadFile(path.Join(runner.ExampleDir, "tree.json")); err == nil {
		out = append(out, normalise(data))
	}
	for _, v := range variants {
		out = append(out, normalise(exampleTree(v)))
	}
	return out
})

// IsExampleTree reports whether data is one of the example trees Init
// writes (the embedded example or a kind's), byte for byte apart from
// trailing whitespace: at the end of each line (so CRLF line ends too)
// and at the end of the file. A tree.json that is still an example has
// not been replaced by the user's own tasks.
func IsExampleTree(data []byte) bool {
	n := normalise(data)
	for _, ex := range exampleTrees() {
		if bytes.Equal(n, ex) {
			return true
		}
	}
	return false
}

func normalise(data []byte) []byte {
	lines := bytes.Split(data, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimRight(l, " \t\r")
	}
	return bytes.TrimRight(bytes.Join(lines, []byte("\n")), "\n")
}

// treeFor is the tree.json Init writes for p: the embedded example when
// nothing was recognised, else the kind's.
func treeFor(example []byte, p Project) []byte {
	if p.Kind() == "" {
		return example
	}
	return exampleTree(variant(p))
}

var errNoGuard = errors.New("init: the embedded example config.toml lacks a [[guard]] with a run line")

// configForProject rewrites the example config.toml's first [[guard]] for
// p: its run line becomes p's command, preceded by a comment on the kind
// and its report, and followed by report = ... when there is one; then
// ConfigFor sets the preset. Nothing recognised leaves the guard as it
// is. The result is checked with config.Parse.
func configForProject(example []byte, preset string, p Project) ([]byte, error) {
	if p.Kind() != "" {
		var err error
		if example, err = withGuard(example, p); err != nil {
			return nil, err
		}
	}
	out, err := ConfigFor(example, preset)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Parse(path.Join(runner.ExampleDir, "config.toml"), out)
	if err != nil {
		return nil, fmt.Errorf("init: the example config.toml for a %s project does not load: %w", kindName(p.Kind()), err)
	}
	if len(cfg.Guards) == 0 {
		return nil, errNoGuard
	}
	g := cfg.Guards[0]
	if g.Name != p.Guard.Name || g.Run != p.Guard.Run || g.Report != p.Guard.Report {
		return nil, fmt.Errorf("init: the example config.toml for a %s project has guard %q running %q, report %q; want %q, %q, %q",
			kindName(p.Kind()), g.Name, g.Run, g.Report, p.Guard.Name, p.Guard.Run, p.Guard.Report)
	}
	return out, nil
}

// withGuard rewrites the run line of the first [[guard]] table.
func withGuard(example []byte, p Project) ([]byte, error) {
	comment := guardComments[variant(p)]
	lines := strings.SplitAfter(string(example), "\n")
	table := ""
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "[") {
			table = trimmed
			continue
		}
		if table != "[[guard]]" || !assigns(trimmed, "run") {
			continue
		}
		eol := line[len(strings.TrimRight(line, "\r\n")):]
		if eol == "" {
			eol = "\n"
		}
		var b strings.Builder
		for _, c := range wrap(comment, commentWidth) {
			b.WriteString(strings.TrimRight("# "+c, " ") + eol)
		}
		b.WriteString("run = " + tomlString(p.Guard.Run) + eol)
		if p.Guard.Report != "" {
			b.WriteString("report = " + tomlString(p.Guard.Report) + eol)
		}
		lines[i] = b.String()
		return []byte(strings.Join(lines, "")), nil
	}
	return nil, errNoGuard
}

// commentWidth is the widest comment line wrap makes, "# " excluded.
const commentWidth = 72

// wrap breaks text into lines of at most width bytes: lines that begin
// with two spaces (examples) are kept as they are; the others are joined
// into paragraphs and wrapped at spaces. A word longer than width gets a
// line of its own.
func wrap(text string, width int) []string {
	var out, words []string
	flush := func() {
		line := ""
		for _, w := range words {
			switch {
			case line == "":
				line = w
			case len(line)+1+len(w) <= width:
				line += " " + w
			default:
				out = append(out, line)
				line = w
			}
		}
		if line != "" {
			out = append(out, line)
		}
		words = nil
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "  ") {
			flush()
			out = append(out, l)
			continue
		}
		words = append(words, strings.Fields(l)...)
	}
	flush()
	return out
}

// tomlString writes s as a TOML basic string. The commands Init writes
// are printable ASCII, for which strconv.Quote's escapes are valid TOML.
func tomlString(s string) string { return strconv.Quote(s) }
