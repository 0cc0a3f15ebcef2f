package tree

import (
	"bytes"
	"strings"
	"testing"
)

// TestChecksRoundTrip: a node's checks are read, written in the canonical
// form (the bytes encoding/json gives the same structs), and cloned apart.
func TestChecksRoundTrip(t *testing.T) {
	src := doc(`{"id": "a", "title": "A", "children": [{"id": "slug", "title": "Slug", "checks": [
		{"report": "junit:build/junit.xml", "run": "python3 -m pytest tests/test_slug.py", "name": "slug-tests", "timeout": "5m"},
		{"name": "lint", "run": "ruff check slug.py", "output_limit": "64KiB"}]}],
		"checks": [{"name": "all", "run": "go test -json ./...", "report": "go-json"}]}`)
	tr := mustParse(t, src)
	slug := tr.Find("slug")
	want := []Check{
		{Name: "slug-tests", Run: "python3 -m pytest tests/test_slug.py", Timeout: "5m", Report: "junit:build/junit.xml"},
		{Name: "lint", Run: "ruff check slug.py", OutputLimit: "64KiB"},
	}
	if len(slug.Checks) != 2 || slug.Checks[0] != want[0] || slug.Checks[1] != want[1] {
		t.Fatalf("checks %+v; want %+v", slug.Checks, want)
	}
	if got := tr.Root.Checks; len(got) != 1 || got[0].Report != "go-json" {
		t.Fatalf("root checks %+v", got)
	}
	out := Marshal(tr)
	if ref := stdMarshal(t, tr); !bytes.Equal(out, ref) {
		t.Errorf("Marshal:\n%s\nencoding/json:\n%s", out, ref)
	}
	if again := Marshal(mustParse(t, string(out))); !bytes.Equal(again, out) {
		t.Errorf("not stable through a second parse:\n%s", again)
	}
	c := tr.Clone()
	c.Find("slug").Checks[0].Run = "true"
	if slug.Checks[0].Run == "true" {
		t.Error("Clone shares the checks with the original")
	}
}

// TestChecksProblems: each wrong check is named with its node, item and
// place, and the fix.
func TestChecksProblems(t *testing.T) {
	tests := []struct{ name, checks, want string }{
		{"not a list", `{"name": "x", "run": "y"}`, `field "checks" must be a list of checks`},
		{"not an object", `["go test"]`, `field "checks" item 1 must be an object with "name" and "run", found string`},
		{"no name", `[{"run": "go test"}]`, `field "checks" item 1: needs a "name"`},
		{"no run", `[{"name": "t"}]`, `field "checks" item 1: needs a command to "run"`},
		{"alias", `[{"name": "t", "command": "go test"}]`, `field "checks" item 1: unknown field "command" (did you mean "run"?)`},
		{"duplicate name", `[{"name": "t", "run": "a"}, {"name": "t", "run": "b"}]`, `field "checks" item 2: name "t" is already used by item 1`},
		{"duplicate key", `[{"name": "t", "run": "a", "run": "b"}]`, `duplicate key "run"`},
		{"timeout", `[{"name": "t", "run": "a", "timeout": "soon"}]`, `"timeout" "soon" must be a duration greater than zero`},
		{"size", `[{"name": "t", "run": "a", "output_limit": "-1"}]`, `"output_limit" "-1" must be a size greater than zero`},
		{"report", `[{"name": "t", "run": "a", "report": "xunit"}]`, `report "xunit": want "go-json"`},
		{"junit outside", `[{"name": "t", "run": "a", "report": "junit:../x.xml"}]`, `inside it`},
		{"number", `[{"name": "t", "run": 3}]`, `field "checks" item 1: "run" must be a string, found number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(file, []byte(doc(`{"id": "a", "title": "A", "checks": `+tt.checks+`}`)))
			// A duplicate key stops the reading, as anywhere in the file: it
			// is named by its line alone.
			if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.name != "duplicate key" && !strings.Contains(err.Error(), ": a: line ")) {
				t.Errorf("Parse = %v; want a problem at node a containing %q", err, tt.want)
			}
		})
	}
	// Validate applies the same rules to a tree built in code.
	tr := &Tree{Version: 1, Root: &Node{ID: "a", Title: "A", Checks: []Check{{Name: "t"}}}}
	if err := tr.Validate(""); err == nil || !strings.Contains(err.Error(), `needs a command to "run"`) {
		t.Errorf("Validate = %v; want the missing run named", err)
	}
}
