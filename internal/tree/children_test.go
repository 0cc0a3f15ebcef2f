package tree

import (
	"bytes"
	"errors"
	"testing"
)

const decompTree = `{"id": "calc", "title": "Calc", "children": [
	{"id": "parse", "title": "Parse", "depends_on": ["ops"]},
	{"id": "ops", "title": "Ops", "attempts": 1}]}`

func TestAddChildren(t *testing.T) {
	tr := mustParse(t, doc(decompTree))
	ix := NewIndex(tr)
	kids := []*Node{
		{ID: "add", Title: "Add", Goal: "a + b", Acceptance: []string{"1+2=3"}},
		{ID: "mul", Title: "Multiply", DependsOn: []string{"add"}},
	}
	if err := tr.AddChildren(ix, "ops", kids); err != nil {
		t.Fatalf("AddChildren: %v", err)
	}
	if got := ix.Path("mul"); got != "calc/ops/mul" {
		t.Errorf("index not rebuilt: Path(mul) = %q", got)
	}
	if ix.Parent("add") != ix.Node("ops") {
		t.Errorf("Parent(add) = %+v", ix.Parent("add"))
	}
	ops := ix.Node("ops")
	if len(ops.Children) != 2 || ops.Attempts != 1 || ops.EffectiveStatus() != StatusOpen {
		t.Errorf("ops after decomposition: %+v", ops)
	}
	sel := Select(tr, ix, 3)
	if sel.Path != "calc/ops/add" {
		t.Errorf("next selection %q, want calc/ops/add", sel.Path)
	}
	if _, err := Parse(file, Marshal(tr)); err != nil {
		t.Errorf("decomposed tree does not read back: %v", err)
	}
}

func TestAddChildrenRejects(t *testing.T) {
	tests := []struct {
		name   string
		parent string
		kids   []*Node
		want   string
	}{
		{"duplicate of an existing id", "ops",
			[]*Node{{ID: "add", Title: "Add"}, {ID: "parse", Title: "Parse again"}},
			"add children to calc/ops: calc/ops/parse: duplicate id \"parse\" (first used at calc/parse)"},
		{"duplicate among the new nodes", "ops",
			[]*Node{{ID: "add", Title: "Add"}, {ID: "add", Title: "Add again"}},
			"add children to calc/ops: calc/ops/add: duplicate id \"add\" (first used at calc/ops/add)"},
		{"cycle", "ops",
			[]*Node{{ID: "add", Title: "Add", DependsOn: []string{"parse"}}},
			"add children to calc/ops: calc/parse: dependency cycle: parse -> ops (contains add) -> parse"},
		{"depends on its new parent", "ops",
			[]*Node{{ID: "add", Title: "Add", DependsOn: []string{"ops"}}},
			"add children to calc/ops: calc/ops/add: depends_on names \"ops\", an ancestor of this node; a node cannot wait for its own ancestor"},
		{"unknown dependency", "ops",
			[]*Node{{ID: "add", Title: "Add", DependsOn: []string{"sub"}}},
			"add children to calc/ops: calc/ops/add: depends_on names unknown id \"sub\""},
		{"invalid fields", "ops",
			[]*Node{{ID: "a b", Title: " "}},
			"add children to calc/ops: calc/ops/(child 1): invalid id \"a b\": " + idRule + "\ncalc/ops/(child 1): field \"title\" is empty"},
		{"nil child", "ops", []*Node{nil},
			"add children to calc/ops: calc/ops: field \"children\" item 1 is null"},
		{"unknown parent", "nope", []*Node{{ID: "add", Title: "Add"}},
			"add children to \"nope\": no node has this id"},
		{"no children", "ops", nil,
			"add children to calc/ops: no children given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := mustParse(t, doc(decompTree))
			before := Marshal(tr)
			ix := NewIndex(tr)
			err := tr.AddChildren(ix, tt.parent, tt.kids)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("AddChildren error:\n%v\nwant:\n%s", err, tt.want)
			}
			var verr *ValidationError
			if wantValidation := tt.parent != "nope" && tt.kids != nil; errors.As(err, &verr) != wantValidation {
				t.Errorf("errors.As(*ValidationError) = %v, want %v", !wantValidation, wantValidation)
			}
			if after := Marshal(tr); !bytes.Equal(after, before) {
				t.Errorf("tree changed:\n%s", after)
			}
			if ix.Node("add") != nil || ix.Path("ops") != "calc/ops" {
				t.Errorf("index changed")
			}
			if ops := ix.Node("ops"); ops == nil || len(ops.Children) != 0 {
				t.Errorf("ops gained children: %+v", ops)
			}
		})
	}
}

func TestAddChildrenDepthLimit(t *testing.T) {
	tr := mustParse(t, nested(MaxNodeDepth))
	ix := NewIndex(tr)
	err := tr.AddChildren(ix, "n126", []*Node{{ID: "deeper", Title: "T"}})
	if err == nil || !bytes.HasSuffix([]byte(err.Error()), []byte("/n126/deeper: node nested 127 levels below the root; at most 126 are allowed")) {
		t.Errorf("AddChildren past the depth limit: %v", err)
	}
	if ix.Node("n126").Children != nil {
		t.Errorf("tree changed")
	}
}
