package plan

import (
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"

	executor "github.com/runner-cli/runner/internal/exec"
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
	tr, err := WholeTree(nodes(t, `[{"id":"r","title":"R","children":[{"id":"a","title":"A"},{"id":"b","title":"B","depends_on":["a"]}]}]`), "out.json")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Root.ID != "r" || len(tr.Root.Children) != 2 || tr.Version != tree.Version {
		t.Errorf("tree = %+v", tr.Root)
	}

	_, err = WholeTree(nodes(t, `[{"id":"r","title":"R","children":[{"id":"a","title":"","depends_on":["b"]},{"id":"b","title":"B","depends_on":["a"]},{"id":"a","title":"Again"}]}]`), "out.json")
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

	_, err = WholeTree(nodes(t, `[{"id":"a","title":"A"},{"id":"b","title":"B"}]`), "out.json")
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), `2 top-level tasks ("a", "b")`) {
		t.Errorf("two roots: %v", err)
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
	want := []string{"acceptance", "children", "depends_on", "goal", "id", "title"}
	if !reflect.DeepEqual(props, want) {
		t.Errorf("task properties %v, want %v", props, want)
	}
	req := append([]string(nil), s.Defs.Task.Required...)
	sort.Strings(req)
	if !reflect.DeepEqual(req, want) {
		t.Errorf("task required %v, want all of %v (strict output)", req, want)
	}
	strict := `{"status":"decomposed","summary":"s","assumptions":null,"questions":null,"children":[
	  {"id":"r","title":"R","goal":null,"acceptance":null,"depends_on":null,"children":[
	    {"id":"a","title":"A","goal":"g","acceptance":["c"],"depends_on":null,"children":null}]}]}`
	if _, err := executor.ParseNestedMessage([]byte(strict)); err != nil {
		t.Errorf("a strict answer does not parse: %v", err)
	}
}
