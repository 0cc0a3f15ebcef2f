package tree

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const file = ".runner/tree.json"

// doc wraps a root node object into a tree file on one line, so that a
// column is the byte offset plus one.
func doc(root string) string { return `{"version": 1, "root": ` + root + `}` }

func mustParse(t *testing.T, src string) *Tree {
	t.Helper()
	tr, err := Parse(file, []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return tr
}

func TestParseProblems(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // the whole error, one problem per line
	}{
		{"syntax error", "{\n  \"version\": 1,\n  \"root\": {\"id\": \"a\",}\n}",
			file + `: line 3, column 22: unexpected '}': expected a quoted object key`},
		{"duplicate key", "{\"version\": 1,\n\"version\": 1}",
			file + `: line 2, column 1: duplicate key "version"`},
		{"too deep", strings.Repeat("[", 300) + strings.Repeat("]", 300),
			file + `: line 1, column 257: nesting deeper than 256 levels`},
		{"not an object", `[1]`,
			file + `: line 1, column 1: the file must hold a JSON object with "version" and "root", found array`},
		{"missing version and root", `{}`,
			file + ": line 1, column 1: missing required field \"version\"\n" +
				file + `: line 1, column 1: missing required field "root"`},
		{"wrong version", `{"version": 2, "root": {"id": "a", "title": "A"}}`,
			file + `: line 1, column 13: unsupported version 2 (this runner reads version 1)`},
		{"version not a number", `{"version": "1", "root": {"id": "a", "title": "A"}}`,
			file + `: line 1, column 13: field "version" must be a whole number, found string`},
		{"version not whole", `{"version": 1.0, "root": {"id": "a", "title": "A"}}`,
			file + `: line 1, column 13: field "version" must be a whole number, found 1.0`},
		{"root not an object", `{"version": 1, "root": []}`,
			file + `: line 1, column 24: field "root" must be an object, found array`},
		{"unknown top-level field", `{"version": 1, "rooot": {}, "root": {"id": "a", "title": "A"}}`,
			file + `: line 1, column 16: unknown field "rooot" (did you mean "root"?)`},
		{"node field at top level", `{"version": 1, "title": "x", "root": {"id": "a", "title": "A"}}`,
			file + `: line 1, column 16: unknown field "title"; node fields belong inside "root"`},
		{"unknown node field with suggestion", doc(`{"id": "a", "title": "A", "dependsOn": []}`),
			file + `: a: line 1, column 50: unknown field "dependsOn" (did you mean "depends_on"?)`},
		{"kebab-case field", doc(`{"id": "a", "title": "A", "max-attempts": 2}`),
			file + `: a: line 1, column 50: unknown field "max-attempts" (did you mean "max_attempts"?)`},
		{"misspelled field", doc(`{"id": "a", "title": "A", "acceptence": []}`),
			file + `: a: line 1, column 50: unknown field "acceptence" (did you mean "acceptance"?)`},
		{"alias field", doc(`{"id": "a", "title": "A", "description": "x"}`),
			file + `: a: line 1, column 50: unknown field "description" (did you mean "goal"?)`},
		{"unknown field without suggestion", doc(`{"id": "a", "title": "A", "colour": "red"}`),
			file + `: a: line 1, column 50: unknown field "colour"`},
		{"missing id", doc(`{"title": "A"}`),
			file + `: (root): line 1, column 24: missing required field "id"`},
		{"missing title", doc(`{"id": "a"}`),
			file + `: a: line 1, column 24: missing required field "title"`},
		{"empty title", doc(`{"id": "a", "title": "  "}`),
			file + `: a: line 1, column 45: field "title" is empty`},
		{"invalid id", doc(`{"id": "a b", "title": "A"}`),
			file + `: (root): line 1, column 31: invalid id "a b": ` + idRule},
		{"id starting with a dot", doc(`{"id": ".a", "title": "A"}`),
			file + `: (root): line 1, column 31: invalid id ".a": ` + idRule},
		{"id too long", doc(`{"id": "` + strings.Repeat("x", 65) + `", "title": "A"}`),
			file + `: (root): line 1, column 31: invalid id "` + strings.Repeat("x", 64) + `...": ` + idRule},
		{"id wrong type", doc(`{"id": 7, "title": "A"}`),
			file + `: (root): line 1, column 31: field "id" must be a string, found number`},
		{"title wrong type", doc(`{"id": "a", "title": null}`),
			file + `: a: line 1, column 45: field "title" must be a string, found null`},
		{"acceptance not a list", doc(`{"id": "a", "title": "A", "acceptance": "x"}`),
			file + `: a: line 1, column 64: field "acceptance" must be a list of strings, found string`},
		{"acceptance item not a string", doc(`{"id": "a", "title": "A", "acceptance": ["x", 2]}`),
			file + `: a: line 1, column 70: field "acceptance" item 2 must be a string, found number`},
		{"children not a list", doc(`{"id": "a", "title": "A", "children": {}}`),
			file + `: a: line 1, column 62: field "children" must be a list of nodes, found object`},
		{"child not an object", doc(`{"id": "a", "title": "A", "children": [{"id": "b", "title": "B"}, "c"]}`),
			file + `: a: line 1, column 90: field "children" item 2 must be an object, found string`},
		{"max_attempts zero", doc(`{"id": "a", "title": "A", "max_attempts": 0}`),
			file + `: a: line 1, column 66: field "max_attempts" must be at least 1, found 0`},
		{"max_attempts fraction", doc(`{"id": "a", "title": "A", "max_attempts": 2.5}`),
			file + `: a: line 1, column 66: field "max_attempts" must be a whole number, found 2.5`},
		{"attempts negative", doc(`{"id": "a", "title": "A", "attempts": -1}`),
			file + `: a: line 1, column 62: field "attempts" must be 0 or more, found -1`},
		{"attempts out of range", doc(`{"id": "a", "title": "A", "attempts": 99999999999999999999}`),
			file + `: a: line 1, column 62: field "attempts" is out of range: "99999999999999999999"`},
		{"invalid status", doc(`{"id": "a", "title": "A", "status": "finished"}`),
			file + `: a: line 1, column 60: invalid status "finished": use "open", "done" or "blocked"`},
		{"empty status", doc(`{"id": "a", "title": "A", "status": ""}`),
			file + `: a: line 1, column 60: invalid status "": use "open", "done" or "blocked"`},
		{"blocked_reason without blocked", doc(`{"id": "a", "title": "A", "status": "open", "blocked_reason": "x"}`),
			file + `: a: line 1, column 86: field "blocked_reason" is only allowed when status is "blocked"; remove it or set the status`},
		{"duplicate ids", "{\"version\": 1, \"root\": {\"id\": \"a\", \"title\": \"A\", \"children\": [\n" +
			"  {\"id\": \"b\", \"title\": \"B\"},\n" +
			"  {\"id\": \"c\", \"title\": \"C\", \"children\": [{\"id\": \"b\", \"title\": \"B2\"}]}\n" +
			"]}}",
			file + `: a/c/b: line 3, column 49: duplicate id "b" (first used at a/b, line 2, column 10)`},
		{"unknown dependency", doc(`{"id": "a", "title": "A", "children": [{"id": "b", "title": "B", "depends_on": ["zz"]}]}`),
			file + `: a/b: line 1, column 104: depends_on names unknown id "zz"`},
		{"depends on itself", doc(`{"id": "a", "title": "A", "children": [{"id": "b", "title": "B", "depends_on": ["b"]}]}`),
			file + `: a/b: line 1, column 104: depends_on names the node itself`},
		{"depends on ancestor", doc(`{"id": "a", "title": "A", "children": [{"id": "b", "title": "B", "depends_on": ["a"]}]}`),
			file + `: a/b: line 1, column 104: depends_on names "a", an ancestor of this node; a node cannot wait for its own ancestor`},
		{"depends on descendant", doc(`{"id": "a", "title": "A", "depends_on": ["b"], "children": [{"id": "b", "title": "B"}]}`),
			file + `: a: line 1, column 65: depends_on names "b", a descendant of this node; a node cannot wait for its own descendant`},
		{"depends_on not a list", doc(`{"id": "a", "title": "A", "depends_on": "b"}`),
			file + `: a: line 1, column 64: field "depends_on" must be a list of strings, found string`},
		{"two-node cycle", doc(`{"id": "r", "title": "R", "children": [` +
			`{"id": "a", "title": "A", "depends_on": ["b"]}, {"id": "b", "title": "B", "depends_on": ["a"]}]}`),
			file + `: r/a: line 1, column 104: dependency cycle: a -> b -> a`},
		{"three-node cycle", doc(`{"id": "r", "title": "R", "children": [` +
			`{"id": "a", "title": "A", "depends_on": ["c"]}, {"id": "b", "title": "B", "depends_on": ["a"]}, ` +
			`{"id": "c", "title": "C", "depends_on": ["b"]}]}`),
			file + `: r/a: line 1, column 104: dependency cycle: a -> c -> b -> a`},
		{"cycle through a parent", doc(`{"id": "r", "title": "R", "children": [` +
			`{"id": "a", "title": "A", "depends_on": ["ops"]}, ` +
			`{"id": "ops", "title": "Ops", "children": [{"id": "mul", "title": "Mul", "depends_on": ["a"]}]}]}`),
			file + `: r/a: line 1, column 104: dependency cycle: a -> ops (contains mul) -> a`},
		{"cycle through an inherited dependency", doc(`{"id": "r", "title": "R", "children": [` +
			`{"id": "a", "title": "A", "depends_on": ["mul"]}, ` +
			`{"id": "ops", "title": "Ops", "depends_on": ["a"], "children": [{"id": "mul", "title": "Mul"}]}]}`),
			file + `: r/a: line 1, column 104: dependency cycle: a -> mul (inside ops) -> a`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Parse(file, []byte(tt.src))
			if err == nil {
				t.Fatalf("Parse succeeded with %+v, want error:\n%s", tr, tt.want)
			}
			var verr *ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("error %T is not a *ValidationError: %v", err, err)
			}
			if verr.File != file {
				t.Errorf("ValidationError.File = %q, want %q", verr.File, file)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestParseReportsAllProblems(t *testing.T) {
	src := "{\n" +
		"  \"version\": 1,\n" +
		"  \"root\": {\n" +
		"    \"id\": \"calc\",\n" +
		"    \"title\": \"Calculator\",\n" +
		"    \"children\": [\n" +
		"      {\"id\": \"parse\", \"title\": \"\", \"dependson\": [\"ops\"]},\n" +
		"      {\"id\": \"ops\", \"title\": \"Ops\", \"depends_on\": [\"nope\"], \"status\": \"wip\"},\n" +
		"      {\"id\": \"parse\", \"title\": \"Again\", \"attempts\": -2}\n" +
		"    ]\n" +
		"  },\n" +
		"  \"extra\": true\n" +
		"}\n"
	want := []string{
		file + `: calc/parse: line 7, column 32: field "title" is empty`,
		file + `: calc/parse: line 7, column 36: unknown field "dependson" (did you mean "depends_on"?)`,
		file + `: calc/ops: line 8, column 71: invalid status "wip": use "open", "done" or "blocked"`,
		file + `: calc/parse: line 9, column 53: field "attempts" must be 0 or more, found -2`,
		file + `: line 12, column 3: unknown field "extra"`,
		file + `: calc/ops: line 8, column 52: depends_on names unknown id "nope"`,
		file + `: calc/parse: line 9, column 14: duplicate id "parse" (first used at calc/parse, line 7, column 14)`,
	}
	_, err := Parse(file, []byte(src))
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("want a *ValidationError, got %v", err)
	}
	var got []string
	for _, p := range verr.Problems {
		got = append(got, p.String())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	first := verr.Problems[0]
	if first.File != file || first.Path != "calc/parse" || first.Line != 7 || first.Col != 32 || first.Msg != `field "title" is empty` {
		t.Errorf("first problem fields = %+v", first)
	}
	if err.Error() != strings.Join(want, "\n") {
		t.Errorf("Error() = %q", err.Error())
	}
}

func TestParseCapsProblems(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"version": 1, "root": {"id": "r", "title": "R", "children": [`)
	const bad = MaxProblems + 25
	for i := range bad {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"id": "x", "title": ""}`) // empty title; every id after the first is a duplicate
	}
	b.WriteString("]}}")
	_, err := Parse(file, []byte(b.String()))
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("want a *ValidationError, got %v", err)
	}
	if len(verr.Problems) != MaxProblems {
		t.Errorf("listed %d problems, want %d", len(verr.Problems), MaxProblems)
	}
	if wantMore := 2*bad - 1 - MaxProblems; verr.More != wantMore {
		t.Errorf("More = %d, want %d", verr.More, wantMore)
	}
	lines := strings.Split(err.Error(), "\n")
	if last := lines[len(lines)-1]; last != "... and 149 more problems" {
		t.Errorf("last line = %q", last)
	}
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{File: "f.json", Path: "a/b", Line: 3, Col: 4, Msg: "bad"}, "f.json: a/b: line 3, column 4: bad"},
		{Problem{File: "f.json", Line: 3, Col: 4, Msg: "bad"}, "f.json: line 3, column 4: bad"},
		{Problem{File: "f.json", Path: "a", Msg: "bad"}, "f.json: a: bad"},
		{Problem{Path: "a", Line: 2, Msg: "bad"}, "a: line 2: bad"},
		{Problem{Msg: "bad"}, "bad"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.p.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", doc(`{"id": "a", "title": "A"}`))
	tr, err := Load(good)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if tr.Root.ID != "a" || tr.Version != 1 {
		t.Errorf("loaded %+v", tr)
	}

	badUTF8 := write("utf8.json", "{\"version\": 1,\n \"root\": {\"id\": \"a\", \"title\": \"\xff\"}}")
	if _, err := Load(badUTF8); err == nil || !strings.Contains(err.Error(), badUTF8+": line 2, column 32: invalid UTF-8") {
		t.Errorf("invalid UTF-8: got %v", err)
	}

	invalid := write("invalid.json", doc(`{"id": "a"}`))
	_, err = Load(invalid)
	var verr *ValidationError
	if !errors.As(err, &verr) || verr.Problems[0].File != invalid {
		t.Errorf("invalid tree: got %v", err)
	}

	missing := filepath.Join(dir, "missing.json")
	if _, err := Load(missing); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: got %v", err)
	}
}

func TestParseEmptyListsReadAsAbsent(t *testing.T) {
	tr := mustParse(t, doc(`{"id": "a", "title": "A", "acceptance": [], "depends_on": [], "children": []}`))
	if tr.Root.Acceptance != nil || tr.Root.DependsOn != nil || tr.Root.Children != nil {
		t.Errorf("empty lists should read as nil: %+v", tr.Root)
	}
}

func TestParseAcceptsFullNode(t *testing.T) {
	tr := mustParse(t, doc(`{"id": "calc", "title": "Calc", "children": [
		{"id": "parse", "title": "Parse", "goal": "g", "acceptance": ["a1", "a2"], "status": "done", "attempts": 1},
		{"id": "ops", "title": "Ops", "depends_on": ["parse"], "max_attempts": 5, "status": "blocked",
		 "attempts": 5, "blocked_reason": "attempts exhausted"}]}`))
	three := 5
	want := &Tree{Version: 1, Root: &Node{ID: "calc", Title: "Calc", Children: []*Node{
		{ID: "parse", Title: "Parse", Goal: "g", Acceptance: []string{"a1", "a2"}, Status: StatusDone, Attempts: 1},
		{ID: "ops", Title: "Ops", DependsOn: []string{"parse"}, MaxAttempts: &three, Status: StatusBlocked,
			Attempts: 5, BlockedReason: "attempts exhausted"},
	}}}
	if !reflect.DeepEqual(tr, want) {
		t.Errorf("got %s\nwant %s", Marshal(tr), Marshal(want))
	}
}

// chainTree is a root with n children, each depending on the previous one.
func chainTree(n int, closeCycle bool) string {
	var b strings.Builder
	b.WriteString(`{"version": 1, "root": {"id": "root", "title": "Chain", "children": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"id": "c%d", "title": "step %d"`, i, i)
		switch {
		case i > 0:
			fmt.Fprintf(&b, `, "depends_on": ["c%d"]`, i-1)
		case closeCycle:
			fmt.Fprintf(&b, `, "depends_on": ["c%d"]`, n-1)
		}
		b.WriteString("}")
	}
	b.WriteString("]}}\n")
	return b.String()
}

func TestLongDependencyChain(t *testing.T) {
	const n = 10000
	tr := mustParse(t, chainTree(n, false))
	if got := len(tr.Root.Children); got != n {
		t.Fatalf("%d children, want %d", got, n)
	}
	if err := tr.Validate(file); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	sel := Select(tr, NewIndex(tr), 3)
	if sel.State != Selectable || sel.Node.ID != "c0" {
		t.Errorf("selected %v %v", sel.State, sel.Path)
	}

	_, err := Parse(file, []byte(chainTree(n, true)))
	want := file + `: root/c0: line 1, column 117: dependency cycle: c0 -> c9999 -> c9998 -> c9997 -> c9996 -> ` +
		`c9995 -> c9994 -> c9993 -> c9992 -> c9991 -> ... (9988 more) -> c2 -> c1 -> c0`
	if err == nil || err.Error() != want {
		t.Errorf("closed chain: got %v\nwant %s", err, want)
	}
}

// nested returns a tree whose nodes each have one child, depth levels
// below the root.
func nested(depth int) string {
	var b strings.Builder
	b.WriteString(`{"version": 1, "root": `)
	for i := range depth + 1 {
		fmt.Fprintf(&b, `{"id": "n%d", "title": "T", "acceptance": ["x"]`, i)
		if i < depth {
			b.WriteString(`, "children": [`)
		}
	}
	for i := range depth + 1 {
		if i > 0 {
			b.WriteString("]")
		}
		b.WriteString("}")
	}
	b.WriteString("}")
	return b.String()
}

func TestDeepTrees(t *testing.T) {
	tr := mustParse(t, nested(MaxNodeDepth))
	if _, err := Parse(file, Marshal(tr)); err != nil {
		t.Fatalf("the deepest valid tree does not read back: %v", err)
	}
	ix := NewIndex(tr)
	leaf := fmt.Sprintf("n%d", MaxNodeDepth)
	if p := ix.Path(leaf); strings.Count(p, "/") != MaxNodeDepth {
		t.Errorf("path of %s has %d separators", leaf, strings.Count(p, "/"))
	}
	if sel := Select(tr, ix, 3); sel.Node == nil || sel.Node.ID != leaf {
		t.Errorf("selected %+v", sel)
	}

	_, err := Parse(file, []byte(nested(MaxNodeDepth+1)))
	if err == nil || !strings.Contains(err.Error(), "nesting deeper than 256 levels") {
		t.Errorf("one level too deep: got %v", err)
	}

	// A tree built in memory is held to the same limit.
	deep := &Node{ID: "n0", Title: "T"}
	cur := deep
	for i := 1; i <= MaxNodeDepth+1; i++ {
		ch := &Node{ID: fmt.Sprintf("n%d", i), Title: "T"}
		cur.Children = []*Node{ch}
		cur = ch
	}
	err = (&Tree{Version: 1, Root: deep}).Validate("")
	if err == nil || !strings.HasSuffix(err.Error(), "node nested 127 levels below the root; at most 126 are allowed") {
		t.Errorf("Validate of a too deep tree: got %v", err)
	}
}

func TestValidateStructs(t *testing.T) {
	shared := &Node{ID: "s", Title: "S"}
	one := 1
	zero := 0
	tests := []struct {
		name string
		tree *Tree
		want string
	}{
		{"valid", &Tree{Version: 1, Root: &Node{ID: "a", Title: "A", MaxAttempts: &one}}, ""},
		{"no root", &Tree{Version: 1}, `t.json: missing required field "root"`},
		{"wrong version", &Tree{Version: 3, Root: &Node{ID: "a", Title: "A"}}, `t.json: unsupported version 3 (this runner reads version 1)`},
		{"missing id and title", &Tree{Version: 1, Root: &Node{}},
			"t.json: (root): missing required field \"id\"\nt.json: (root): missing required field \"title\""},
		{"runner fields", &Tree{Version: 1, Root: &Node{ID: "a", Title: "A", MaxAttempts: &zero, Attempts: -1, Status: "x"}},
			"t.json: a: field \"max_attempts\" must be at least 1, found 0\n" +
				"t.json: a: field \"attempts\" must be 0 or more, found -1\n" +
				"t.json: a: invalid status \"x\": use \"open\", \"done\" or \"blocked\""},
		{"nil child", &Tree{Version: 1, Root: &Node{ID: "a", Title: "A", Children: []*Node{nil}}},
			`t.json: a: field "children" item 1 is null`},
		{"node twice", &Tree{Version: 1, Root: &Node{ID: "a", Title: "A", Children: []*Node{shared, shared}}},
			`t.json: a: field "children" item 2 is a node that already appears elsewhere in the tree`},
		{"duplicate and cycle", &Tree{Version: 1, Root: &Node{ID: "a", Title: "A", Children: []*Node{
			{ID: "b", Title: "B", DependsOn: []string{"c"}},
			{ID: "c", Title: "C", DependsOn: []string{"b"}},
			{ID: "b", Title: "B again"},
		}}},
			"t.json: a/b: duplicate id \"b\" (first used at a/b)\nt.json: a/b: dependency cycle: b -> c -> b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.tree.Validate("t.json")
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Validate:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}
