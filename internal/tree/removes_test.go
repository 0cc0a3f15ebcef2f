package tree

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestRemovesRoundTrip: a node's removes are read, written in the
// canonical form (after checks, before depends_on), and cloned apart.
func TestRemovesRoundTrip(t *testing.T) {
	tr := mustParse(t, doc(`{"id": "a", "title": "A", "children": [
		{"id": "old", "title": "Drop the old parser", "depends_on": ["new"], "removes": ["TestOldParse", "example.com/calc/legacy"]},
		{"id": "new", "title": "New parser"}]}`))
	old := tr.Find("old")
	if want := []string{"TestOldParse", "example.com/calc/legacy"}; !slices.Equal(old.Removes, want) {
		t.Fatalf("removes %q, want %q", old.Removes, want)
	}
	out := Marshal(tr)
	if ref := stdMarshal(t, tr); !bytes.Equal(out, ref) {
		t.Errorf("Marshal:\n%s\nencoding/json:\n%s", out, ref)
	}
	if !bytes.Contains(out, []byte("\"removes\": [\n          \"TestOldParse\",")) {
		t.Errorf("removes not written:\n%s", out)
	}
	c := tr.Clone()
	c.Find("old").Removes[0] = "TestOther"
	if old.Removes[0] != "TestOldParse" {
		t.Error("Clone shares the removes with the original")
	}
}

// TestRemovesProblems: each wrong entry is named with its node and item.
func TestRemovesProblems(t *testing.T) {
	many := `["` + strings.Repeat(`t", "`, MaxRemoves) + `t"]`
	tests := []struct{ name, removes, want string }{
		{"not a list", `"TestOld"`, `field "removes" must be a list of strings, found string`},
		{"not a string", `[3]`, `field "removes" item 1 must be a string, found number`},
		{"empty", `["TestA", " "]`, `field "removes" item 2 is empty`},
		{"two lines", `["TestA\nTestB"]`, `field "removes" item 1 holds a control character`},
		{"twice", `["TestA", "TestA"]`, `field "removes" item 2 repeats "TestA"`},
		{"too many", many, `at most 1000 are allowed`},
		{"alias", ``, `unknown field "remove" (did you mean "removes"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			field := `"removes": ` + tt.removes
			if tt.removes == "" {
				field = `"remove": ["TestA"]`
			}
			_, err := Parse(file, []byte(doc(`{"id": "a", "title": "A", `+field+`}`)))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), ": a: line ") {
				t.Errorf("Parse = %v; want a problem at node a containing %q", err, tt.want)
			}
		})
	}
	tr := &Tree{Version: 1, Root: &Node{ID: "a", Title: "A", Removes: []string{""}}}
	if err := tr.Validate(""); err == nil || !strings.Contains(err.Error(), `field "removes" item 1 is empty`) {
		t.Errorf("Validate = %v; want the empty entry named", err)
	}
}
