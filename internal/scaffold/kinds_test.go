package scaffold

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/testreport"
	"github.com/runner-cli/runner/internal/tree"
)

// TestMain makes Detect believe pytest is installed, unless a test says
// otherwise (withPytest): the tests do not depend on the machine's.
func TestMain(m *testing.M) {
	realPytestInstalled = pytestInstalled
	pytestInstalled = func(string) bool { return true }
	os.Exit(m.Run())
}

var realPytestInstalled func(string) bool

// TestPytestInstalled asks python3 whether it has pytest: a python3 on
// PATH that answers -m pytest --version, or fails to.
func TestPytestInstalled(t *testing.T) {
	for _, installed := range []bool{true, false} {
		bin := t.TempDir()
		code := "1"
		if installed {
			code = "0"
		}
		script := "#!/bin/sh\n[ \"$*\" = \"-m pytest --version\" ] && exit " + code + "\nexit 2\n"
		if err := os.WriteFile(filepath.Join(bin, "python3"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", bin)
		if got := realPytestInstalled(t.TempDir()); got != installed {
			t.Errorf("installed = %v, want %v", got, installed)
		}
	}
}

// writeFiles creates files (slash-separated paths relative to root) with
// their content.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type kindCase struct {
	name    string
	files   map[string]string
	kinds   []string // every kind found, in order
	flavour string
	guard   Guard
	variant string
}

var kindCases = []kindCase{
	{"go", map[string]string{"go.mod": "module example.com/x\n"},
		[]string{KindGo}, "", Guard{"test", "go test -json ./...", "go-json"}, KindGo},
	{"python pyproject pytest", map[string]string{"pyproject.toml": "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\n"},
		[]string{KindPython}, FlavourPytest,
		Guard{"test", "python3 -m pytest -q --junitxml=build/test-reports/junit.xml", "junit:build/test-reports/junit.xml"}, FlavourPytest},
	{"python requirements pytest", map[string]string{"requirements.txt": "requests\n", "requirements-dev.txt": "pytest>=8\n"},
		[]string{KindPython}, FlavourPytest,
		Guard{"test", "python3 -m pytest -q --junitxml=build/test-reports/junit.xml", "junit:build/test-reports/junit.xml"}, FlavourPytest},
	{"python setup.cfg pytest", map[string]string{"setup.cfg": "[tool:pytest]\ntestpaths = tests\n"},
		[]string{KindPython}, FlavourPytest,
		Guard{"test", "python3 -m pytest -q --junitxml=build/test-reports/junit.xml", "junit:build/test-reports/junit.xml"}, FlavourPytest},
	{"python conftest", map[string]string{"tests/test_a.py": "", "tests/conftest.py": ""},
		[]string{KindPython}, FlavourPytest,
		Guard{"test", "python3 -m pytest -q --junitxml=build/test-reports/junit.xml", "junit:build/test-reports/junit.xml"}, FlavourPytest},
	{"python unittest", map[string]string{"setup.py": "from setuptools import setup\nsetup(name='x')\n"},
		[]string{KindPython}, FlavourUnittest, Guard{"test", "python3 -m unittest discover -v", "unittest"}, FlavourUnittest},
	{"python unittest tests folder", map[string]string{"tests/test_a.py": "import unittest\n"},
		[]string{KindPython}, FlavourUnittest, Guard{"test", "python3 -m unittest discover -v -s tests", "unittest"}, FlavourUnittest},
	{"python unittest at the root", map[string]string{"money.py": "", "test_money.py": "import unittest\n"},
		[]string{KindPython}, FlavourUnittest, Guard{"test", "python3 -m unittest discover -v", "unittest"}, FlavourUnittest},
	{"python unittest tests package", map[string]string{"tests/test_a.py": "", "tests/__init__.py": "", "requirements.txt": "requests\n"},
		[]string{KindPython}, FlavourUnittest, Guard{"test", "python3 -m unittest discover -v", "unittest"}, FlavourUnittest},
	{"node npm", map[string]string{"package.json": `{"name": "x", "scripts": {"test": "jest"}}`},
		[]string{KindNode}, FlavourNPM, Guard{"test", "npm test", ""}, FlavourNPM},
	{"node --test", map[string]string{"package.json": `{"scripts": {"test": "node --test"}}`},
		[]string{KindNode}, FlavourNodeTest, Guard{"test", "node --test --test-reporter=tap", "tap"}, FlavourNodeTest},
	{"node --test with files", map[string]string{"package.json": `{"scripts": {"test": "node  --test test/*.test.js"}}`},
		[]string{KindNode}, FlavourNodeTest, Guard{"test", "node --test --test-reporter=tap test/*.test.js", "tap"}, FlavourNodeTest},
	{"node --test with pretest", map[string]string{"package.json": `{"scripts": {"pretest": "tsc", "test": "node --test"}}`},
		[]string{KindNode}, FlavourNPM, Guard{"test", "npm test", ""}, FlavourNPM},
	{"node --test with its reporter", map[string]string{"package.json": `{"scripts": {"test": "node --test --test-reporter=spec"}}`},
		[]string{KindNode}, FlavourNPM, Guard{"test", "npm test", ""}, FlavourNPM},
	{"node --test in a pipeline", map[string]string{"package.json": `{"scripts": {"test": "node --test && eslint ."}}`},
		[]string{KindNode}, FlavourNPM, Guard{"test", "npm test", ""}, FlavourNPM},
	{"rust", map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n"},
		[]string{KindRust}, "", Guard{"test", "cargo test", ""}, KindRust},
	{"make", map[string]string{"Makefile": "all: build\n\n.PHONY: test\ntest: build\n\t./run-tests\n"},
		[]string{KindMake}, "", Guard{"test", "make test", ""}, KindMake},
	{"make, several targets", map[string]string{"GNUmakefile": "check test lint:: deps\n\ttrue\n"},
		[]string{KindMake}, "", Guard{"test", "make test", ""}, KindMake},
	{"go and make", map[string]string{"go.mod": "module x\n", "Makefile": "test:\n\tgo test ./...\n"},
		[]string{KindGo, KindMake}, "", Guard{"test", "go test -json ./...", "go-json"}, KindGo},
	{"python, node and rust", map[string]string{"Cargo.toml": "", "package.json": `{"scripts": {"test": "vitest"}}`, "pyproject.toml": "[project]\n"},
		[]string{KindPython, KindNode, KindRust}, FlavourUnittest, Guard{"test", "python3 -m unittest discover -v", "unittest"}, FlavourUnittest},
	{"nothing", map[string]string{"README.md": "hello\n"}, nil, "", Guard{}, ""},
	{"npm placeholder", map[string]string{"package.json": `{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}`},
		nil, "", Guard{}, ""},
	{"package.json without test", map[string]string{"package.json": `{"scripts": {"build": "tsc"}}`}, nil, "", Guard{}, ""},
	{"package.json broken", map[string]string{"package.json": `{"scripts": {"test": `}, nil, "", Guard{}, ""},
	{"makefile without test target", map[string]string{"Makefile": ".PHONY: test\nTEST := 1\ntests: all\nall:\n\ttrue # test: no\n"},
		nil, "", Guard{}, ""},
	{"make reads GNUmakefile first", map[string]string{"GNUmakefile": "all:\n", "Makefile": "test:\n"}, nil, "", Guard{}, ""},
	{"python tests folder without tests", map[string]string{"tests/helper.py": ""}, nil, "", Guard{}, ""},
	{"go.mod is a folder", map[string]string{"go.mod/x": ""}, nil, "", Guard{}, ""},
}

func TestDetect(t *testing.T) {
	for _, tc := range kindCases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, tc.files)
			p := Detect(root)
			var kinds []string
			for _, f := range p.Found {
				kinds = append(kinds, f.Kind)
				if len(f.Evidence) == 0 {
					t.Errorf("kind %s found without evidence", f.Kind)
				}
			}
			if !reflect.DeepEqual(kinds, tc.kinds) {
				t.Errorf("kinds found = %q, want %q", kinds, tc.kinds)
			}
			if p.Flavour() != tc.flavour {
				t.Errorf("flavour = %q, want %q", p.Flavour(), tc.flavour)
			}
			if p.Guard != tc.guard {
				t.Errorf("guard = %+v, want %+v", p.Guard, tc.guard)
			}
			if variant(p) != tc.variant {
				t.Errorf("variant = %q, want %q", variant(p), tc.variant)
			}
			line := p.Recognised()
			if len(tc.kinds) == 0 {
				if !strings.Contains(line, "neutral example, without a guard") {
					t.Errorf("Recognised() = %q, want it to say the neutral example was written", line)
				}
				if g := p.GuardLine(); !strings.HasPrefix(g, "no guard: write one") {
					t.Errorf("GuardLine() = %q, want it to say to write one", g)
				}
				if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "write the [[guard]] that runs your tests") {
					t.Errorf("Notes = %q, want which guard to write", p.Notes)
				}
				return
			} else {
				if !strings.Contains(line, kindName(tc.kinds[0])+" project") {
					t.Errorf("Recognised() = %q, want it to name %s", line, kindName(tc.kinds[0]))
				}
				for _, k := range tc.kinds[1:] {
					if !strings.Contains(line, "also found") || !strings.Contains(line, kindName(k)+" (") {
						t.Errorf("Recognised() = %q, want it to say %s was found too", line, kindName(k))
					}
				}
			}
			wantReport := ", report " + tc.guard.Report
			if tc.guard.Report == "" {
				wantReport = ", no report: a suite that fails when a run starts stops that run before any agent works"
			}
			if g := p.GuardLine(); !strings.Contains(g, `guard "test" runs `+tc.guard.Run+wantReport) {
				t.Errorf("GuardLine() = %q, want the command and the report", g)
			}
		})
	}
}

// treeFile is tree.json decoded strictly with the example trees' fields.
type treeFile struct {
	Version int          `json:"version"`
	Root    *exampleNode `json:"root"`
}

// TestInitKinds runs Init in a repository of each kind and checks what it
// wrote: config.toml loads, with the kind's guard and the example's
// timeout and output limit; tree.json is the kind's example tree.
func TestInitKinds(t *testing.T) {
	exCfg, err := config.Parse("example", example(t, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	exGuard := exCfg.Guards[0]
	for _, tc := range kindCases {
		for _, preset := range []string{"", config.PresetClaude, config.PresetCommand} {
			t.Run(tc.name+"/"+preset, func(t *testing.T) {
				root := t.TempDir()
				writeFiles(t, root, tc.files)
				if _, err := Init(Options{Root: root, Preset: preset}); err != nil {
					t.Fatalf("Init: %v", err)
				}
				cfgPath := filepath.Join(root, ".runner", "config.toml")
				cfg, err := config.Load(cfgPath)
				if err != nil {
					t.Fatalf("config.toml does not load: %v", err)
				}
				if preset != "" && cfg.Executor.Preset != preset {
					t.Errorf("preset = %q, want %q", cfg.Executor.Preset, preset)
				}
				data := readFile(t, filepath.Join(root, ".runner", "tree.json"))
				if !IsExampleTree(data) {
					t.Errorf("tree.json is not an example tree")
				}
				text := string(readFile(t, cfgPath))
				if len(tc.kinds) == 0 {
					checkNeutral(t, cfg, text, data)
					return
				}
				if len(cfg.Guards) != 1 {
					t.Fatalf("%d guards, want 1", len(cfg.Guards))
				}
				g := cfg.Guards[0]
				if (Guard{g.Name, g.Run, g.Report}) != tc.guard {
					t.Errorf("guard = %q %q %q, want %+v", g.Name, g.Run, g.Report, tc.guard)
				}
				if g.Timeout != exGuard.Timeout || g.OutputLimit != exGuard.OutputLimit {
					t.Errorf("guard timeout %v, output_limit %v; want the example's %v, %v", g.Timeout, g.OutputLimit, exGuard.Timeout, exGuard.OutputLimit)
				}
				if !strings.Contains(text, "# Recognised ") {
					t.Errorf("config.toml does not say what was recognised")
				}
				if tc.guard.Report == "" && !strings.Contains(text, "report = ") {
					t.Errorf("config.toml does not say how to get a report")
				}
				checkKindTree(t, data, tc)
			})
		}
	}
}

// checkNeutral checks what Init writes where no kind was recognised: no
// guard, a comment saying which to write with a report, and an example
// tree that names no tool and has no check.
func checkNeutral(t *testing.T, cfg *config.Config, text string, tree []byte) {
	t.Helper()
	if len(cfg.Guards) != 0 {
		t.Errorf("%d guards, want none", len(cfg.Guards))
	}
	for _, want := range []string{"# No test command was recognised", "# [[guard]]", `#   run = "python3 -m unittest discover -v"   report = "unittest"`, `# run = "go test ./..."`} {
		if !strings.Contains(text, want) {
			t.Errorf("config.toml lacks %q", want)
		}
	}
	for _, word := range []string{"go test", "greet", "python", "npm", "cargo", `"checks"`} {
		if strings.Contains(string(tree), word) {
			t.Errorf("the neutral tree.json mentions %q", word)
		}
	}
}

func mustConfigFor(t *testing.T, ex []byte, preset string) []byte {
	t.Helper()
	out, err := ConfigFor(ex, preset)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkKindTree checks a kind's example tree: strict JSON with the
// human-owned fields and checks, a root saying it is an example to
// replace, a leaf judged by one check that runs the kind's test command on
// a placeholder path; tree.Parse accepts it.
func checkKindTree(t *testing.T, data []byte, tc kindCase) {
	t.Helper()
	var tf treeFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&tf); err != nil {
		t.Fatalf("tree.json: %v", err)
	}
	if tf.Version != tree.Version || tf.Root == nil {
		t.Fatalf("tree.json: version %d, root %v", tf.Version, tf.Root)
	}
	if !strings.Contains(tf.Root.Title, "(replace this tree with your own)") {
		t.Errorf("root title %q does not say to replace the tree", tf.Root.Title)
	}
	if !strings.HasPrefix(tf.Root.Goal, "Replace this tree with your project's tasks: one leaf per piece of work") {
		t.Errorf("root goal %q", tf.Root.Goal)
	}
	for _, word := range []string{"Go ", "greet", "Python", "Node", "Rust"} {
		if strings.Contains(tf.Root.Goal, word) {
			t.Errorf("root goal mentions %q: %q", word, tf.Root.Goal)
		}
	}
	if n := len(tf.Root.Children); n < 2 || n > 3 {
		t.Errorf("root has %d children, want 2-3", n)
	}
	ids := map[string]bool{tf.Root.ID: true}
	var checks []exampleCheck
	deps := 0
	for _, c := range tf.Root.Children {
		if !idPattern.MatchString(c.ID) || ids[c.ID] || len(c.Children) != 0 {
			t.Errorf("child %q: bad or repeated id, or not a leaf", c.ID)
		}
		ids[c.ID] = true
		for _, d := range c.DependsOn {
			deps++
			if !ids[d] {
				t.Errorf("%s depends on %q, not an earlier node", c.ID, d)
			}
		}
		checks = append(checks, c.Checks...)
	}
	if deps == 0 {
		t.Errorf("no node uses depends_on")
	}
	if len(checks) != 1 {
		t.Fatalf("%d checks in the tree, want 1", len(checks))
	}
	ch := checks[0]
	if ch.Name == "" || !strings.Contains(ch.Run, "your") {
		t.Errorf("check %+v: want a name and a run with an obvious placeholder", ch)
	}
	if _, err := testreport.ParseFormat(ch.Report); err != nil {
		t.Errorf("check report: %v", err)
	}
	// The check runs the guard's tool, with the same kind of report.
	if tool := strings.Fields(tc.guard.Run)[0]; !strings.HasPrefix(ch.Run, tool+" ") {
		t.Errorf("check runs %q, want the guard's tool %s", ch.Run, tool)
	}
	if gk, ck := strings.SplitN(tc.guard.Report, ":", 2)[0], strings.SplitN(ch.Report, ":", 2)[0]; gk != ck {
		t.Errorf("check report %q, guard report %q: want the same kind", ch.Report, tc.guard.Report)
	}
	// Parse applies the rules of §2, checks' included.
	if _, err := tree.Parse("tree.json", data); err != nil {
		t.Errorf("tree.Parse: %v", err)
	}
}

func TestIsExampleTree(t *testing.T) {
	embedded := example(t, "tree.json")
	examples := [][]byte{embedded}
	for _, v := range variants {
		examples = append(examples, exampleTree(v))
	}
	seen := map[string]bool{}
	for i, ex := range examples {
		if seen[string(ex)] {
			t.Errorf("example %d is the same as an earlier one", i)
		}
		seen[string(ex)] = true
		if !IsExampleTree(ex) {
			t.Errorf("example %d is not recognised", i)
		}
		crlf := bytes.ReplaceAll(ex, []byte("\n"), []byte("\r\n"))
		for name, data := range map[string][]byte{
			"trailing newlines":   append(bytes.Clone(ex), "\n\n  \n"...),
			"no final newline":    bytes.TrimRight(ex, "\n"),
			"CRLF":                crlf,
			"trailing spaces":     bytes.ReplaceAll(ex, []byte(",\n"), []byte(", \t\n")),
			"no trailing newline": bytes.TrimSpace(crlf),
		} {
			if !IsExampleTree(data) {
				t.Errorf("example %d with %s is not recognised", i, name)
			}
		}
		for name, data := range map[string][]byte{
			"a changed title":   bytes.Replace(ex, []byte("(replace this tree with your own)"), []byte("(mine)"), 1),
			"leading space":     append([]byte(" "), ex...),
			"reindented":        bytes.ReplaceAll(ex, []byte("\n  "), []byte("\n    ")),
			"one byte less":     bytes.Replace(ex, []byte(`"id"`), []byte(`"i"`), 1),
			"an added node":     bytes.Replace(ex, []byte(`"children": [`), []byte(`"children": [{"id": "x", "title": "X"},`), 1),
			"an inner line end": bytes.Replace(ex, []byte(`"title": `), []byte("\"title\":\n"), 1),
		} {
			if IsExampleTree(data) {
				t.Errorf("example %d with %s is taken for an example", i, name)
			}
		}
	}
	for _, data := range []string{"", "{}", `{"version": 1, "root": {"id": "mine", "title": "My project"}}`} {
		if IsExampleTree([]byte(data)) {
			t.Errorf("IsExampleTree(%q) = true", data)
		}
	}
}

// TestExampleTreesCanonical: every example tree is in tree.Marshal's
// canonical form, so the runner rewriting a tree it has not changed
// leaves it an example tree.
func TestExampleTreesCanonical(t *testing.T) {
	examples := map[string][]byte{"embedded": example(t, "tree.json")}
	for _, v := range variants {
		examples[v] = exampleTree(v)
	}
	for name, data := range examples {
		tr, err := tree.Parse("tree.json", data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if out := tree.Marshal(tr); !bytes.Equal(out, data) {
			t.Errorf("%s: tree.Marshal gives\n%s\nwant\n%s", name, out, data)
		}
	}
}

// TestExampleTreesUsable checks every variant's tree as TestExampleTree
// checks the embedded one, and that each variant has its comment.
func TestExampleTreesUsable(t *testing.T) {
	for _, v := range variants {
		if v != "" && (guardComments[v] == "" || testCommands[v] == "" || exampleChecks[v].Run == "") {
			t.Errorf("variant %s lacks a comment, a test command or a check", v)
		}
		for _, line := range wrap(guardComments[v], commentWidth) {
			if len(line) > commentWidth && !strings.HasPrefix(line, "  ") {
				t.Errorf("variant %s: comment line %q is wider than %d", v, line, commentWidth)
			}
		}
		var tf treeFile
		dec := json.NewDecoder(bytes.NewReader(exampleTree(v)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&tf); err != nil || tf.Root == nil || tf.Root.Title != ExampleTitle {
			t.Errorf("variant %s: %v", v, err)
		}
	}
}

// withPytest makes Detect believe pytest is installed, or not.
func withPytest(t *testing.T, installed bool) {
	was := pytestInstalled
	pytestInstalled = func(string) bool { return installed }
	t.Cleanup(func() { pytestInstalled = was })
}

func TestInitNotes(t *testing.T) {
	withPytest(t, true)
	pytest := map[string]string{"pyproject.toml": "[tool.pytest.ini_options]\n"}
	tests := []struct {
		name      string
		files     map[string]string
		wantNote  string // "" for none
		wantClean bool
	}{
		{"no .gitignore", pytest, "create a .gitignore with the line build/", false},
		{".gitignore without build", merge(pytest, map[string]string{".gitignore": "__pycache__/\n*.pyc\n"}), "add build/ to .gitignore", false},
		{".gitignore with build/", merge(pytest, map[string]string{".gitignore": "__pycache__/\nbuild/\n"}), "", true},
		{".gitignore with /build", merge(pytest, map[string]string{".gitignore": "/build\n"}), "", true},
		{".gitignore with the reports", merge(pytest, map[string]string{".gitignore": "build/test-reports/\n"}), "", true},
		{".gitignore with *.xml", merge(pytest, map[string]string{".gitignore": "*.xml\n"}), "", true},
		{".gitignore unignoring", merge(pytest, map[string]string{".gitignore": "build/\n!build/test-reports/\n"}), "add build/", false},
		{"unittest: no report", map[string]string{"setup.py": ""}, "", true},
		{"go: report on stdout", map[string]string{"go.mod": "module x\n"}, "", true},
		{"nothing recognised", map[string]string{"wc2.py": "print(1)\n"}, "no guard was written: write the [[guard]] that runs your tests", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, tc.files)
			before, _ := os.ReadFile(filepath.Join(root, ".gitignore"))
			p := Detect(root)
			notes := strings.Join(p.Notes, "\n")
			if tc.wantClean != (notes == "") || !strings.Contains(notes, tc.wantNote) {
				t.Errorf("notes = %q, want %q", notes, tc.wantNote)
			}
			if _, err := Init(Options{Root: root, Project: &p}); err != nil {
				t.Fatal(err)
			}
			// Init leaves the repository's own .gitignore alone.
			after, _ := os.ReadFile(filepath.Join(root, ".gitignore"))
			if string(before) != string(after) {
				t.Errorf(".gitignore changed:\n%s", after)
			}
		})
	}
}

// TestInitPytestMissing: a pytest project on a machine without pytest is
// told so by init, before a run's preflight would stop on it.
func TestInitPytestMissing(t *testing.T) {
	withPytest(t, false)
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"pyproject.toml": "[tool.pytest.ini_options]\n", ".gitignore": "build/\n"})
	p := Detect(root)
	if len(p.Notes) != 1 || !strings.HasPrefix(p.Notes[0], "pytest is not installed for python3 here") || !strings.Contains(p.Notes[0], "preflight") {
		t.Errorf("notes = %q", p.Notes)
	}
	// unittest needs nothing installed: no such note.
	root = t.TempDir()
	writeFiles(t, root, map[string]string{"setup.py": ""})
	if p := Detect(root); len(p.Notes) != 0 {
		t.Errorf("unittest notes = %q", p.Notes)
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func TestIgnored(t *testing.T) {
	tests := []struct {
		gitignore string
		want      bool
	}{
		{"", false},
		{"build", true},
		{"build/", true},
		{"/build/", true},
		{"**/build", true},
		{"build/**", true},
		{"build/*", true},
		{"# build/\n", false},
		{"builds/", false},
		{"test-reports/", true},
		{"/test-reports/", false},
		{"junit.xml", true},
		{"build/\n!build/", false},
		{"build/\n!build/test-reports/junit.xml", false},
		{"!build/\nbuild/", true},
		{"  build/  \r\n", true},
	}
	for _, tc := range tests {
		if got := ignored([]byte(tc.gitignore), "build/test-reports/junit.xml"); got != tc.want {
			t.Errorf("ignored(%q) = %v, want %v", tc.gitignore, got, tc.want)
		}
	}
}

// TestInitKindConflict: a repository whose kind changed since init gets a
// conflict on the files that differ, not a silent rewrite.
func TestInitKindConflict(t *testing.T) {
	root := t.TempDir()
	if _, err := Init(Options{Root: root}); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{"Cargo.toml": "[package]\n"})
	_, err := Init(Options{Root: root})
	var ee *ExistsError
	if !asExists(err, &ee) || !reflect.DeepEqual(ee.Paths, []string{".runner/config.toml", ".runner/tree.json"}) {
		t.Fatalf("Init after Cargo.toml appeared = %v; want a conflict on config.toml and tree.json", err)
	}
	if _, err := Init(Options{Root: root, Force: true}); err != nil {
		t.Fatal(err)
	}
	res, err := Init(Options{Root: root})
	if err != nil || len(res.Created)+len(res.Overwritten) != 0 {
		t.Fatalf("Init again = %+v, %v; want everything kept", res, err)
	}
}

func asExists(err error, target **ExistsError) bool {
	e, ok := err.(*ExistsError)
	if ok {
		*target = e
	}
	return ok
}

func TestWrap(t *testing.T) {
	got := wrap("aaa bbb\nccc ddd eee\n  keep   this  \nfff", 11)
	want := []string{"aaa bbb ccc", "ddd eee", "  keep   this  ", "fff"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("wrap = %q, want %q", got, want)
	}
}
