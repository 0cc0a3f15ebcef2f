package plan

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/scaffold"
	"github.com/runner-cli/runner/internal/tree"
)

func nodes(t *testing.T, data string) []*tree.Node {
	t.Helper()
	m, err := executor.ParseNestedMessage([]byte(`{"status":"decomposed","summary":"s","children":` + data + `}`))
	if err != nil {
		t.Fatal(err)
	}
	return m.Children
}

func TestWholeTree(t *testing.T) {
	root := &tree.Node{ID: "calc", Title: "Calculator", Goal: "A calculator."}

	// SPEC §16: the answer's children are the root's; the root stays.
	tr, err := WholeTree(root, nodes(t, `[{"id":"parse","title":"Parse"},{"id":"ops","title":"Ops","depends_on":["parse"]}]`), "out.json")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Root.ID != "calc" || tr.Root.Title != "Calculator" || tr.Root.Goal != "A calculator." || len(tr.Root.Children) != 2 ||
		tr.Root.Children[0].ID != "parse" || tr.Version != tree.Version {
		t.Errorf("top-level tasks: tree = %s", tree.Marshal(tr))
	}
	// One top-level leaf is the root's only task.
	tr, err = WholeTree(root, nodes(t, `[{"id":"only","title":"Only"}]`), "out.json")
	if err != nil || tr.Root.ID != "calc" || len(tr.Root.Children) != 1 {
		t.Errorf("one leaf: tree = %v, %v", tr, err)
	}

	// A single-root answer is taken as the root: one task with children,
	// or one with the root's id.
	tr, err = WholeTree(root, nodes(t, `[{"id":"r","title":"R","children":[{"id":"a","title":"A"},{"id":"b","title":"B","depends_on":["a"]}]}]`), "out.json")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Root.ID != "r" || len(tr.Root.Children) != 2 {
		t.Errorf("single root: tree = %s", tree.Marshal(tr))
	}
	tr, err = WholeTree(root, nodes(t, `[{"id":"calc","title":"Calculator CLI"}]`), "out.json")
	if err != nil || tr.Root.ID != "calc" || tr.Root.Title != "Calculator CLI" || len(tr.Root.Children) != 0 {
		t.Errorf("the root repeated: tree = %v, %v", tr, err)
	}

	_, err = WholeTree(root, nodes(t, `[{"id":"r","title":"R","children":[{"id":"a","title":"","depends_on":["b"]},{"id":"b","title":"B","depends_on":["a"]},{"id":"a","title":"Again"}]}]`), "out.json")
	var ie *InvalidError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want an *InvalidError", err)
	}
	all := strings.Join(ie.Problems, "\n")
	for _, want := range []string{`out.json: r/a: missing required field "title"`, `duplicate id "a"`, "dependency cycle"} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
	if !strings.Contains(err.Error(), "tree.json is unchanged") {
		t.Errorf("error %q does not say tree.json is unchanged", err)
	}

	// A task that takes the root's id is a duplicate.
	_, err = WholeTree(root, nodes(t, `[{"id":"calc","title":"A"},{"id":"b","title":"B"}]`), "out.json")
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), `duplicate id "calc"`) {
		t.Errorf("a task with the root's id: %v", err)
	}
	_, err = WholeTree(root, nil, "out.json")
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "no tasks") {
		t.Errorf("no tasks: %v", err)
	}
}

func TestPlanRoot(t *testing.T) {
	cur := &tree.Tree{Version: tree.Version, Root: &tree.Node{ID: "app", Title: "App", Goal: "g", Status: tree.StatusDone, Attempts: 2,
		Children: []*tree.Node{{ID: "x", Title: "X"}}}}
	r := PlanRoot(cur, []Document{{Name: "docs/prd.md", Text: "# Other\n"}})
	if r.ID != "app" || r.Title != "App" || r.Goal != "g" || r.Status != "" || r.Attempts != 0 || len(r.Children) != 0 {
		t.Errorf("from the current tree: %+v", r)
	}
	for _, tt := range []struct {
		docs      []Document
		id, title string
	}{
		{[]Document{{Name: "docs/Calc PRD.md", Text: "intro\n\n#  Calculator CLI \n## Parts\n"}}, "calc-prd", "Calculator CLI"},
		{[]Document{{Name: "spec.txt", Text: "no heading"}}, "spec", "spec"},
		{[]Document{{Name: "stdin", Text: "# From stdin"}}, "stdin", "From stdin"},
		{[]Document{{Name: "___.md", Text: ""}}, "plan", "Plan"},
		{nil, "plan", "Plan"},
	} {
		r := PlanRoot(nil, tt.docs)
		if r.ID != tt.id || r.Title != tt.title || !tree.ValidID(r.ID) {
			t.Errorf("PlanRoot(nil, %v) = %q %q, want %q %q", tt.docs, r.ID, r.Title, tt.id, tt.title)
		}
	}
}

// TestPlanRootReplacesExample: init's example root gives way to one
// named after the documents, title and goal, whether the tree is still
// the example or only its root is.
func TestPlanRootReplacesExample(t *testing.T) {
	dir := t.TempDir()
	if _, err := scaffold.Init(scaffold.Options{Root: dir, Project: &scaffold.Project{}}); err != nil {
		t.Fatal(err)
	}
	example, err := tree.Load(filepath.Join(dir, ".runner", "tree.json"))
	if err != nil {
		t.Fatal(err)
	}
	prd := []Document{{Name: "docs/prd.md", Text: "---\nowner: me\n---\n# Money\n\n<!-- draft -->\nA small library for money\narithmetic in cents.\n\n## Tasks\n- add\n"}}
	for name, cur := range map[string]*tree.Tree{
		"the example": example,
		"its root only": {Version: tree.Version, Root: &tree.Node{ID: example.Root.ID, Title: example.Root.Title, Goal: example.Root.Goal,
			Children: []*tree.Node{{ID: "mine", Title: "Mine"}}}},
	} {
		r := PlanRoot(cur, prd)
		if r.ID != "prd" || r.Title != "Money" || r.Goal != "A small library for money arithmetic in cents." {
			t.Errorf("%s: root %q %q %q", name, r.ID, r.Title, r.Goal)
		}
	}
	if shownTree(&current{t: example}, nil) != nil {
		t.Error("the planning prompt shows the example's tasks")
	}
	if shownTree(&current{t: example}, example.Root.Children[0]) == nil {
		t.Error("a decomposition's prompt lost the tree")
	}
}

func TestFirstParagraph(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"# T\n\n```\ncode\n```\n\n| a | b |\n\nThe goal,\n  on two lines.\n\nMore.", "The goal, on two lines."},
		{"just text", "just text"},
		{"# Only a title\n## And a section\n", ""},
		{"---\n", ""},
	} {
		if got := firstParagraph(strings.Split(tt.in, "\n")); got != tt.want {
			t.Errorf("firstParagraph(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDecomposition(t *testing.T) {
	cur := mustTree(t, smallTree)
	before := string(tree.Marshal(cur))
	tr, err := Decomposition(cur, "big", nodes(t, `[{"id":"x","title":"X","children":[{"id":"y","title":"Y"}]},{"id":"z","title":"Z","depends_on":["x","done-one"]}]`), "out.json")
	if err != nil {
		t.Fatal(err)
	}
	if big := tr.Find("big"); len(big.Children) != 2 || len(big.Children[0].Children) != 1 {
		t.Errorf("big = %+v", big)
	}
	if string(tree.Marshal(cur)) != before {
		t.Error("Decomposition changed the current tree")
	}
	_, err = Decomposition(cur, "big", nodes(t, `[{"id":"app","title":"Clash"},{"id":"w","title":"W","depends_on":["big"]}]`), "out.json")
	var ie *InvalidError
	if !errors.As(err, &ie) || len(ie.Problems) != 2 || !strings.HasPrefix(ie.Problems[0], "out.json: ") {
		t.Errorf("err = %v, want two problems labelled out.json", err)
	}
	if string(tree.Marshal(cur)) != before {
		t.Error("a refused decomposition changed the current tree")
	}
}

func TestProgressAndOpen(t *testing.T) {
	tr := mustTree(t, `{"version": 1, "root": {"id": "app", "title": "App", "children": [
	  {"id": "a", "title": "A", "status": "done"}, {"id": "b", "title": "B", "attempts": 1},
	  {"id": "c", "title": "C", "status": "blocked", "blocked_reason": "why"}, {"id": "d", "title": "D", "status": "open"}]}}`)
	if got, want := Progress(tr), []string{"app/a", "app/b", "app/c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Progress = %v, want %v", got, want)
	}
	if got := Progress(mustTree(t, `{"version": 1, "root": {"id": "app", "title": "App", "max_attempts": 5}}`)); got != nil {
		t.Errorf("Progress of an untouched tree = %v", got)
	}
	ix := tree.NewIndex(tr)
	for id, want := range map[string]string{"nope": "no task", "app": "already has subtasks", "a": "is done", "c": "runner reset c", "b": "", "d": ""} {
		_, err := Open(tr, ix, id)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("Open(%s) = %v, want %q", id, err, want)
		}
	}
}

// The schema is JSON, describes a task with the human-owned fields a
// plan may set, and the strict answer it asks for parses.
func TestSchema(t *testing.T) {
	var s struct {
		Properties map[string]any `json:"properties"`
		Defs       struct {
			Task struct {
				Required   []string       `json:"required"`
				Properties map[string]any `json:"properties"`
			} `json:"task"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal([]byte(Schema), &s); err != nil {
		t.Fatal(err)
	}
	var props []string
	for k := range s.Defs.Task.Properties {
		props = append(props, k)
	}
	sort.Strings(props)
	want := []string{"acceptance", "checks", "children", "depends_on", "goal", "id", "title"}
	if !reflect.DeepEqual(props, want) {
		t.Errorf("task properties %v, want %v", props, want)
	}
	req := append([]string(nil), s.Defs.Task.Required...)
	sort.Strings(req)
	if !reflect.DeepEqual(req, want) {
		t.Errorf("task required %v, want all of %v (strict output)", req, want)
	}
	strict := `{"status":"decomposed","summary":"s","assumptions":null,"questions":null,"children":[
	  {"id":"r","title":"R","goal":null,"acceptance":null,"depends_on":null,"checks":null,"children":[
	    {"id":"a","title":"A","goal":"g","acceptance":["c"],"depends_on":null,"children":null,
	     "checks":[{"name":"a-tests","run":"go test -run TestA ./...","report":"go-json"}]}]}]}`
	m, err := executor.ParseNestedMessage([]byte(strict))
	if err != nil {
		t.Fatalf("a strict answer does not parse: %v", err)
	}
	if got := m.Children[0].Children[0].Checks; len(got) != 1 || got[0].Name != "a-tests" || got[0].Report != "go-json" {
		t.Errorf("the proposed task's checks are %+v; want a-tests with its report", got)
	}
}
