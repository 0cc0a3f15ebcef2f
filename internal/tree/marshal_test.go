package tree

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestMarshalGolden(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "messy.json"))
	if err != nil {
		t.Fatal(err)
	}
	tr := mustParse(t, string(src))
	got := Marshal(tr)
	golden := filepath.Join("testdata", "canonical.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Marshal differs from %s:\n%s", golden, got)
	}
	// The canonical form is a fixed point and reads back to the same tree.
	again := mustParse(t, string(got))
	if !reflect.DeepEqual(again, tr) {
		t.Errorf("re-parsed tree differs:\n%s", Marshal(again))
	}
	if b := Marshal(again); !bytes.Equal(b, got) {
		t.Errorf("Marshal is not stable:\n%s", b)
	}
	for _, want := range []string{"<html> & ", "a < b && b > c", "Ünïcödé ✓", `tab\there`} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("canonical form lacks %q", want)
		}
	}
	if !bytes.HasSuffix(got, []byte("}\n")) || bytes.HasSuffix(got, []byte("\n\n")) {
		t.Errorf("canonical form should end with exactly one newline")
	}
	if !bytes.HasPrefix(got, []byte("{\n  \"version\": 1,\n  \"root\": {\n    \"id\": \"calc\",\n")) {
		t.Errorf("unexpected key order or indent:\n%s", got)
	}
}

func TestSavePreservesHumanFields(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "messy.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tree.json")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	// The runner changes only runner-owned fields.
	ix := NewIndex(tr)
	ops := ix.Node("ops")
	ops.Status, ops.Attempts = StatusBlocked, 5
	ops.BlockedReason = "attempts exhausted"
	if err := Save(path, tr); err != nil {
		t.Fatalf("Save: %v", err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o644 {
		t.Errorf("mode %v, want 0644", perm)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatalf("Load after Save: %v", err)
	}
	orig := mustParse(t, string(src))
	o := NewIndex(orig).Node("ops")
	o.Status, o.Attempts, o.BlockedReason = StatusBlocked, 5, "attempts exhausted"
	if !reflect.DeepEqual(back, orig) {
		t.Errorf("saved tree lost or changed fields:\n%s\nwant:\n%s", Marshal(back), Marshal(orig))
	}
	root := back.Root
	if root.Goal != "A calculator command." || root.Acceptance[0] != "go test ./... passes" ||
		*NewIndex(back).Node("ops").MaxAttempts != 5 || root.Children[0].Goal != `Read argv; keep <html> & "quotes" as they are.` {
		t.Errorf("human fields changed: %s", Marshal(back))
	}
}

func TestSaveRefusesInvalidTree(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tree.json")
	orig := []byte(doc(`{"id": "a", "title": "A"}`))
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	tr := &Tree{Version: 1, Root: &Node{ID: "a", Title: "A", Children: []*Node{{ID: "a", Title: "again"}}}}
	err := Save(path, tr)
	want := "save " + path + ": refusing to write an invalid tree:\na/a: duplicate id \"a\" (first used at a)"
	if err == nil || err.Error() != want {
		t.Errorf("Save error:\n%v\nwant:\n%s", err, want)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, orig) {
		t.Errorf("the file was changed to %s", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("Save left files behind: %v", entries)
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		name    string
		root    string
		changed bool
		want    string // "id=status" for every node, in tree order
	}{
		{"all children done",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "status": "done"}, {"id": "b", "title": "B", "status": "done"}]}`,
			true, "r=done a=done b=done"},
		{"done parent with an open child reopens",
			`{"id": "r", "title": "R", "status": "done", "children": [{"id": "a", "title": "A", "status": "done"}, {"id": "b", "title": "B"}]}`,
			true, "r=open a=done b="},
		{"nested",
			`{"id": "r", "title": "R", "children": [{"id": "p", "title": "P", "children": [{"id": "a", "title": "A", "status": "done"}]}, {"id": "b", "title": "B", "status": "done"}]}`,
			true, "r=done p=done a=done b=done"},
		{"nested reopen",
			`{"id": "r", "title": "R", "status": "done", "children": [{"id": "p", "title": "P", "status": "done", "children": [{"id": "a", "title": "A", "status": "blocked"}]}]}`,
			true, "r=open p=open a=blocked"},
		{"blocked parent whose children are done",
			`{"id": "r", "title": "R", "status": "blocked", "blocked_reason": "why", "children": [{"id": "a", "title": "A", "status": "done"}]}`,
			true, "r=done a=done"},
		{"blocked parent with open children stays blocked",
			`{"id": "r", "title": "R", "status": "blocked", "blocked_reason": "why", "children": [{"id": "a", "title": "A"}]}`,
			false, "r=blocked a="},
		{"nothing to do",
			`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "status": "done"}, {"id": "b", "title": "B"}]}`,
			false, "r= a=done b="},
		{"a leaf is left alone", `{"id": "r", "title": "R", "status": "done"}`, false, "r=done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := mustParse(t, doc(tt.root))
			if got := tr.Normalize(); got != tt.changed {
				t.Errorf("Normalize() = %v, want %v", got, tt.changed)
			}
			var got []string
			ix := NewIndex(tr)
			for _, n := range ix.fl.nodes {
				got = append(got, n.ID+"="+string(n.Status))
			}
			if s := strings.Join(got, " "); s != tt.want {
				t.Errorf("statuses %q, want %q", s, tt.want)
			}
			if err := tr.Validate(""); err != nil {
				t.Errorf("normalized tree does not validate: %v", err)
			}
			if tr.Normalize() {
				t.Errorf("second Normalize reported a change")
			}
		})
	}
}

// stdMarshal is the reference Marshal must match: encoding/json on the
// same structs.
func stdMarshal(t testing.TB, tr *Tree) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(tr); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestMarshalMatchesEncodingJSON(t *testing.T) {
	two := 2
	tests := map[string]*Tree{
		"nil root":  {Version: 1},
		"leaf root": {Version: 1, Root: &Node{ID: "a", Title: "A"}},
		"every field and odd strings": {Version: 7, Root: &Node{
			ID: "a", Title: "quote \" backslash \\ <tag> & \u2028 \u2029 \x00 \x1f \b \f \n \r \t \x7f é \xff\xfe end",
			Goal: "g", Acceptance: []string{"x", ""}, DependsOn: []string{"b"}, MaxAttempts: &two,
			Status: StatusBlocked, Attempts: -3, BlockedReason: "r",
			Children: []*Node{
				{ID: "b", Title: "B", Children: []*Node{{ID: "c", Title: "C"}, {ID: "d", Title: "D", Acceptance: []string{"1"}}}},
				{ID: "e", Title: "E", Acceptance: []string{}, Children: []*Node{}},
				nil,
			},
		}},
		"generated":      genTree(500),
		"nil child only": {Version: 1, Root: &Node{ID: "a", Title: "A", Children: []*Node{nil}}},
	}
	for name, tr := range tests {
		t.Run(name, func(t *testing.T) {
			if got, want := Marshal(tr), stdMarshal(t, tr); !bytes.Equal(got, want) {
				t.Errorf("Marshal:\n%s\nencoding/json:\n%s", got, want)
			}
		})
	}
}

func TestPointerCycle(t *testing.T) {
	n := &Node{ID: "a", Title: "A"}
	n.Children = []*Node{n}
	tr := &Tree{Version: 1, Root: n}
	want := `a: field "children" item 1 is a node that already appears elsewhere in the tree`
	if err := tr.Validate(""); err == nil || err.Error() != want {
		t.Errorf("Validate: %v, want %s", err, want)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "pointer cycle") {
			t.Errorf("Marshal recovered %v, want a pointer cycle panic", r)
		}
	}()
	Marshal(tr)
	t.Errorf("Marshal returned")
}

// libraryMarshal is the canonical form as go-json-experiment/json writes
// it from the struct tags: the same bytes as Marshal for strings of valid
// UTF-8 (it writes U+FFFD itself where encoding/json writes \ufffd).
func libraryMarshal(t testing.TB, tr *Tree) []byte {
	t.Helper()
	b, err := jsonv2.Marshal(tr, jsontext.WithIndent("  "), jsontext.EscapeForJS(true))
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func TestMarshalMatchesLibrary(t *testing.T) {
	two := 2
	tests := map[string]*Tree{
		"leaf root": {Version: 1, Root: &Node{ID: "a", Title: "A"}},
		"every field and odd strings": {Version: 7, Root: &Node{
			ID: "a", Title: "quote \" backslash \\ <tag> & \u2028 \u2029 \x00 \x1f \b \f \n \r \t \x7f é end",
			Goal: "g", Acceptance: []string{"x", ""}, DependsOn: []string{"b"}, MaxAttempts: &two,
			Status: StatusBlocked, Attempts: -3, BlockedReason: "r",
			Children: []*Node{{ID: "b", Title: "B"}, {ID: "e", Title: "E", Acceptance: []string{}, Children: []*Node{}}},
		}},
		"generated": genTree(500),
	}
	for name, tr := range tests {
		t.Run(name, func(t *testing.T) {
			if got, want := Marshal(tr), libraryMarshal(t, tr); !bytes.Equal(got, want) {
				t.Errorf("Marshal:\n%s\ngo-json-experiment/json:\n%s", got, want)
			}
		})
	}
}
