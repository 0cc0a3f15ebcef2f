package scaffold

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	runner "github.com/runner-cli/runner"
	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/strictjson"
	"github.com/runner-cli/runner/internal/tree"
)

var exampleNames = []string{".gitignore", "config.toml", "tree.json"}

func example(t *testing.T, name string) []byte {
	t.Helper()
	data, err := runner.Example.ReadFile(runner.ExampleDir + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// snapshot records every file and folder under root with its content.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		out[rel] = string(readFile(t, p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// neutral is the file Init writes where nothing is recognised.
func neutral(t *testing.T, name string) []byte {
	t.Helper()
	switch name {
	case "config.toml":
		data, err := configForProject(example(t, name), "", Project{})
		if err != nil {
			t.Fatal(err)
		}
		return data
	case "tree.json":
		return exampleTree("")
	}
	return example(t, name)
}

func TestInitEmptyDir(t *testing.T) {
	root := t.TempDir()
	res, err := Init(Options{Root: root})
	if err != nil {
		t.Fatalf("Init: %v", err)
	}
	want := Result{Created: []string{
		".runner/.gitignore", ".runner/config.toml", ".runner/context/",
		".runner/runs/", ".runner/state/", ".runner/tree.json",
	}}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("Init result = %+v, want %+v", res, want)
	}
	// Nothing recognised in an empty folder: the example's .gitignore,
	// its config.toml without a guard, the neutral tree.
	for _, name := range exampleNames {
		if got := readFile(t, filepath.Join(root, ".runner", name)); string(got) != string(neutral(t, name)) {
			t.Errorf("%s differs from the neutral example", name)
		}
	}
	for _, d := range Dirs {
		entries, err := os.ReadDir(filepath.Join(root, ".runner", d))
		if err != nil || len(entries) != 0 {
			t.Errorf("folder %s: %v, %d entries; want an empty folder", d, err, len(entries))
		}
	}
	cfg, err := config.Load(filepath.Join(root, ".runner", "config.toml"))
	if err != nil || cfg.Executor.Preset != config.PresetCodex {
		t.Fatalf("written config: %+v, %v; want preset codex", cfg, err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(root, ".runner", ".tmp-*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

func TestInitAgainKeepsIdenticalFiles(t *testing.T) {
	root := t.TempDir()
	if _, err := Init(Options{Root: root}); err != nil {
		t.Fatal(err)
	}
	res, err := Init(Options{Root: root})
	if err != nil {
		t.Fatalf("second Init: %v", err)
	}
	if len(res.Created) != 0 || len(res.Overwritten) != 0 || len(res.Kept) != 6 {
		t.Fatalf("second Init = %+v; want everything kept", res)
	}
}

func TestInitRefusesWithoutForce(t *testing.T) {
	root := t.TempDir()
	if _, err := Init(Options{Root: root}); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(root, ".runner", "config.toml")
	treePath := filepath.Join(root, ".runner", "tree.json")
	if err := os.WriteFile(cfgPath, []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(treePath, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Missing pieces must not be created either when Init refuses.
	if err := os.Remove(filepath.Join(root, ".runner", ".gitignore")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, ".runner", "runs")); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, root)

	res, err := Init(Options{Root: root})
	var ee *ExistsError
	if !errors.As(err, &ee) {
		t.Fatalf("Init = %+v, %v; want an *ExistsError", res, err)
	}
	if want := []string{".runner/config.toml", ".runner/tree.json"}; !reflect.DeepEqual(ee.Paths, want) {
		t.Errorf("ExistsError paths = %q, want %q", ee.Paths, want)
	}
	for _, s := range []string{".runner/config.toml", ".runner/tree.json", "use --force to overwrite"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
	if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Fatalf("Init wrote something although it refused:\nbefore %v\nafter  %v", before, after)
	}
}

func TestInitForce(t *testing.T) {
	root := t.TempDir()
	if _, err := Init(Options{Root: root}); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(root, ".runner", "config.toml")
	if err := os.WriteFile(cfgPath, []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, ".runner", ".gitignore")); err != nil {
		t.Fatal(err)
	}
	res, err := Init(Options{Root: root, Force: true})
	if err != nil {
		t.Fatalf("Init with Force: %v", err)
	}
	want := Result{
		Created:     []string{".runner/.gitignore"},
		Overwritten: []string{".runner/config.toml"},
		Kept:        []string{".runner/context/", ".runner/runs/", ".runner/state/", ".runner/tree.json"},
	}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("Init result = %+v, want %+v", res, want)
	}
	if got := readFile(t, cfgPath); string(got) != string(neutral(t, "config.toml")) {
		t.Fatalf("config.toml was not restored from the example")
	}
}

func TestInitPresets(t *testing.T) {
	tests := []struct {
		preset   string
		wantArgs []string
	}{
		{"codex", []string{"--sandbox", "workspace-write"}},
		{"claude", []string{"--permission-mode", "acceptEdits", "--allowedTools", "Bash"}},
		{"command", nil},
	}
	for _, tc := range tests {
		t.Run(tc.preset, func(t *testing.T) {
			root := t.TempDir()
			if _, err := Init(Options{Root: root, Preset: tc.preset}); err != nil {
				t.Fatalf("Init: %v", err)
			}
			path := filepath.Join(root, ".runner", "config.toml")
			cfg, err := config.Load(path)
			if err != nil {
				t.Fatalf("the written config does not load: %v", err)
			}
			if cfg.Executor.Preset != tc.preset {
				t.Errorf("preset = %q, want %q", cfg.Executor.Preset, tc.preset)
			}
			if !reflect.DeepEqual(cfg.Executor.Args, tc.wantArgs) {
				t.Errorf("args = %q, want %q", cfg.Executor.Args, tc.wantArgs)
			}
			text := string(readFile(t, path))
			if !strings.Contains(text, "\npreset = \""+tc.preset+"\"\n") {
				t.Errorf("config.toml has no line preset = %q", tc.preset)
			}
			if tc.preset != "command" {
				if len(cfg.Executor.Command) != 0 {
					t.Errorf("command = %q, want none", cfg.Executor.Command)
				}
				return
			}
			cmd := strings.Join(cfg.Executor.Command, " ")
			if len(cfg.Executor.Command) == 0 || !strings.Contains(cmd, "{output_file}") || !strings.Contains(cmd, "{schema_file}") {
				t.Errorf("command = %q, want a working command using the placeholders", cfg.Executor.Command)
			}
			for _, ph := range []string{"{prompt_file}", "{output_file}", "{schema_file}", "{iteration}", "{node}"} {
				if !strings.Contains(text, ph) {
					t.Errorf("config.toml does not explain placeholder %s", ph)
				}
			}
		})
	}
}

func TestInitPresetMismatchIsAConflict(t *testing.T) {
	root := t.TempDir()
	if _, err := Init(Options{Root: root, Preset: "codex"}); err != nil {
		t.Fatal(err)
	}
	_, err := Init(Options{Root: root, Preset: "claude"})
	var ee *ExistsError
	if !errors.As(err, &ee) || !reflect.DeepEqual(ee.Paths, []string{".runner/config.toml"}) {
		t.Fatalf("Init with another preset = %v; want a conflict on config.toml only", err)
	}
}

func TestInitErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root string) Options
		want  string
	}{
		{"unknown preset", func(t *testing.T, root string) Options {
			return Options{Root: root, Preset: "gemini"}
		}, `unknown preset "gemini"`},
		{"missing root", func(t *testing.T, root string) Options {
			return Options{Root: filepath.Join(root, "absent")}
		}, "repository root"},
		{".runner is a file", func(t *testing.T, root string) Options {
			if err := os.WriteFile(filepath.Join(root, ".runner"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return Options{Root: root, Force: true}
		}, ".runner exists but is not a folder"},
		{"config.toml is a folder", func(t *testing.T, root string) Options {
			if err := os.MkdirAll(filepath.Join(root, ".runner", "config.toml"), 0o755); err != nil {
				t.Fatal(err)
			}
			return Options{Root: root, Force: true}
		}, "config.toml: exists but is a folder"},
		{"runs is a file", func(t *testing.T, root string) Options {
			if err := os.MkdirAll(filepath.Join(root, ".runner"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, ".runner", "runs"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return Options{Root: root}
		}, "runs exists but is not a folder"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			opts := tc.setup(t, root)
			before := snapshot(t, root)
			_, err := Init(opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Init = %v; want an error containing %q", err, tc.want)
			}
			if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
				t.Fatalf("Init wrote something although it failed")
			}
		})
	}
}

func TestConfigForKeepsExampleUnchangedForDefaultPreset(t *testing.T) {
	ex := example(t, "config.toml")
	for _, preset := range []string{"", "codex"} {
		got, err := ConfigFor(ex, preset)
		if err != nil || string(got) != string(ex) {
			t.Errorf("ConfigFor(example, %q) changed the example (err %v)", preset, err)
		}
	}
	if _, err := ConfigFor([]byte("[executor]\n"), "claude"); err == nil {
		t.Errorf("ConfigFor accepted a config without preset and args lines")
	}
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// TestExampleTree checks tree.json against the SPEC §2 schema: strict
// JSON with only the human-owned fields, valid unique ids, depends_on
// naming existing nodes, a root with 2-3 children, one with depends_on.
func TestExampleTree(t *testing.T) {
	data := example(t, "tree.json")
	var tr tree.Tree
	if err := strictjson.Decode(data, &tr, 64); err != nil {
		t.Fatalf("tree.json: %v", err)
	}
	if tr.Version != tree.Version || tr.Root == nil {
		t.Fatalf("tree.json: version %d, root %v", tr.Version, tr.Root)
	}
	if n := len(tr.Root.Children); n < 2 || n > 3 {
		t.Errorf("root has %d children, want 2-3", n)
	}
	ids := map[string]bool{}
	var nodes []*tree.Node
	var walk func(n *tree.Node)
	walk = func(n *tree.Node) {
		nodes = append(nodes, n)
		if !idPattern.MatchString(n.ID) || ids[n.ID] {
			t.Errorf("id %q is invalid or repeated", n.ID)
		}
		ids[n.ID] = true
		if n.Title == "" {
			t.Errorf("node %s has no title", n.ID)
		}
		if n.Status != "" || n.Attempts != 0 || n.BlockedReason != "" {
			t.Errorf("node %s sets runner-owned fields", n.ID)
		}
		if n.MaxAttempts != nil && *n.MaxAttempts < 1 {
			t.Errorf("node %s has max_attempts %d", n.ID, *n.MaxAttempts)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(tr.Root)
	deps := 0
	for _, n := range nodes {
		for _, d := range n.DependsOn {
			deps++
			if !ids[d] || d == n.ID {
				t.Errorf("node %s depends on %q, which is not another node", n.ID, d)
			}
		}
	}
	if deps == 0 {
		t.Errorf("no node uses depends_on")
	}
	// Only the human-owned fields appear in the file.
	allowed := map[string]bool{"id": true, "title": true, "goal": true, "acceptance": true, "depends_on": true, "max_attempts": true, "children": true}
	for _, m := range regexp.MustCompile(`"([a-z_]+)":`).FindAllStringSubmatch(string(data), -1) {
		if m[1] != "version" && m[1] != "root" && !allowed[m[1]] {
			t.Errorf("tree.json uses field %q", m[1])
		}
	}
}

func TestExampleGitignore(t *testing.T) {
	lines := map[string]bool{}
	for _, l := range strings.Split(string(example(t, ".gitignore")), "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	for _, want := range []string{"context/", "runs/", "lock"} {
		if !lines[want] {
			t.Errorf(".gitignore does not ignore %s", want)
		}
	}
}
