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
			g.Run, g.Report = "python3 -m unittest discover -v", "unittest"
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
		return Guard{} // nothing recognised: no guard (see neutralGuard)
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

// variants are every variant with an example of its own; "" is the
// neutral example of a repository whose kind was not recognised.
var variants = []string{KindGo, FlavourPytest, FlavourUnittest, FlavourNodeTest, FlavourNPM, KindRust, KindMake, ""}

// exampleChecks are the checks of the example tree's checked leaf, per
// variant: the kind's test command on one placeholder file or package.
var exampleChecks = map[string]exampleCheck{
	KindGo:          {Name: "unit", Run: "go test -json ./path/to/your/package/", Report: "go-json"},
	FlavourPytest:   {Name: "unit", Run: "python3 -m pytest -q --junitxml=" + ReportDir + "/unit.xml tests/test_your_module.py", Report: "junit:" + ReportDir + "/unit.xml"},
	FlavourUnittest: {Name: "unit", Run: "python3 -m unittest -v tests/test_your_module.py", Report: "unittest"},
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
// own that runs the kind's test command on a placeholder path. The
// neutral variant ("") names no command: its second leaf says what a
// check is, without one.
func exampleTree(v string) []byte {
	check, cmd := exampleChecks[v], testCommands[v]
	passes := cmd + " passes"
	if cmd == "" {
		passes = "the project's tests pass"
	}
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
					passes,
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
					passes,
				},
				DependsOn:   []string{"first-task"},
				MaxAttempts: 5,
				Checks:      []exampleCheck{check},
			},
		},
	}
	if cmd == "" {
		checked := root.Children[1]
		checked.Title = "A task judged by checks of its own (an example: write your own)"
		checked.Goal = neutralCheckedGoal
		checked.Checks = nil
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

// treeFor is the tree.json Init writes for p: the kind's example, or the
// neutral one when nothing was recognised.
func treeFor(p Project) []byte {
	return exampleTree(variant(p))
}

var errNoGuard = errors.New("init: the embedded example config.toml lacks a [[guard]] with a run line")

// configForProject rewrites the example config.toml's first [[guard]] for
// p: its run line becomes p's command, preceded by a comment on the kind
// and its report, and followed by report = ... when there is one; then
// ConfigFor sets the preset. Nothing recognised comments the guard out,
// saying which to write (withoutGuard). The result is checked with
// config.Parse.
func configForProject(example []byte, preset string, p Project) ([]byte, error) {
	var err error
	if p.Kind() != "" {
		example, err = withGuard(example, p)
	} else {
		example, err = withoutGuard(example)
	}
	if err != nil {
		return nil, err
	}
	out, err := ConfigFor(example, preset)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Parse(path.Join(runner.ExampleDir, "config.toml"), out)
	if err != nil {
		return nil, fmt.Errorf("init: the example config.toml for a %s project does not load: %w", kindName(p.Kind()), err)
	}
	if p.Kind() == "" {
		if len(cfg.Guards) != 0 {
			return nil, errors.New("init: the neutral example config.toml still has a [[guard]]")
		}
		return out, nil
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
