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

// sameAsReference checks that Parse and refParse agree on data: the same
// tree, or the same problems in the same order with the same count of
// problems left out.
func sameAsReference(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := refParse(file, data)
	got, gotErr := Parse(file, data)
	switch {
	case (gotErr == nil) != (wantErr == nil):
		t.Fatalf("Parse error = %v, reference %v\n%s", gotErr, wantErr, data)
	case gotErr != nil:
		var g, w *ValidationError
		if !errors.As(gotErr, &g) || !errors.As(wantErr, &w) {
			if gotErr.Error() != wantErr.Error() {
				t.Fatalf("Parse error = %v, reference %v", gotErr, wantErr)
			}
			return
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("Parse problems:\n%v\n(more %d)\nreference:\n%v\n(more %d)\n%s", g, g.More, w, w.More, data)
		}
	case !reflect.DeepEqual(got, want):
		t.Fatalf("Parse tree:\n%s\nreference:\n%s", Marshal(got), Marshal(want))
	}
}

// manyProblems is a tree in which every node's children come before its
// other fields, and more than MaxProblems problems are spread over the
// nodes and the file.
func manyProblems() string {
	var b strings.Builder
	var node func(depth, k int)
	node = func(depth, k int) {
		b.WriteString("{")
		if depth < 3 {
			b.WriteString(`"children": [`)
			for j := range 4 {
				if j > 0 {
					b.WriteString(", ")
				}
				node(depth+1, j)
			}
			b.WriteString("], ")
		}
		fmt.Fprintf(&b, `"id": "n%d-%d", "title": "", "attempts": -1, "bogus": 1, "depends_on": ["x%d"]}`, depth, k, k)
	}
	b.WriteString(`{"root": `)
	node(0, 0)
	b.WriteString(`, "extra": 1, "version": 2}`)
	return b.String()
}

func TestParseMatchesReference(t *testing.T) {
	inputs := []string{
		manyProblems(),
		chainTree(300, true),
		nested(MaxNodeDepth),
		nested(MaxNodeDepth + 1),
		doc(`{"children": [{"title": "no id", "children": [{"id": "x"}]}], "id": "r"}`),
		doc(`{"id": "a", "title": "A", "children": [{"id": "b", "title": "B", "depends_on": ["a", 3, "zz"]}, "c", {"id": "b"}]}`),
		`{"version": "1", "root": []}`,
		`{"version": 1.5, "root": {"id": "a", "title": "A", "max_attempts": 1e3, "attempts": 99999999999999999999}}`,
		`{"version": 1, "id": "a", "root": {"id": "a", "title": "A", "status": "wip", "blocked_reason": "r"}}`,
		`[1, 2]`, `"x"`, `{}`, `{"version": 1, "root": {"id": "a", "title": "A"}} x`, ``,
		`{"version": 1, "root": {"id": "a", "title": "A", "children": [{"id": "b", "title": "B"}, ]}}`,
		// Duplicate keys: node fields, other names, inside skipped values.
		doc(`{"id": "a", "title": "A", "id": "b"}`),
		doc(`{"\u0069d": "a", "title": "A", "id": "b"}`),
		doc(`{"id": "a", "title": "A", "x": 1, "x": 2}`),
		doc(`{"id": "a", "title": "A", "x": {"k": 1, "k": 2}}`),
		doc(`{"id": "a", "title": "A", "goal": [{"k": [{"a": 1, "\u0061": 2}]}]}`),
		`{"version": 1, "version": 1, "root": {"id": "a", "title": "A"}}`,
		`{"version": 1, "x": 1, "root": {"id": "a", "title": "A"}, "x": 2}`,
	}
	for _, name := range []string{"messy.json", "canonical.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, string(data))
	}
	for _, tt := range fuzzSeeds() {
		inputs = append(inputs, tt)
	}
	for i, in := range inputs {
		t.Run(fmt.Sprint(i), func(t *testing.T) { sameAsReference(t, []byte(in)) })
	}
	_, err := Parse(file, []byte(manyProblems()))
	var verr *ValidationError
	if !errors.As(err, &verr) || verr.More == 0 {
		t.Fatalf("manyProblems does not exceed the cap: %v", err)
	}
}

func FuzzParseMatchesReference(f *testing.F) {
	f.Add([]byte(manyProblems()))
	for _, s := range fuzzSeeds() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsReference(t, data)
	})
}

func fuzzSeeds() []string {
	return []string{
		doc(decompTree),
		doc(`{"id": "a", "title": "A", "children": [{"id": "b", "title": "B", "depends_on": ["a"]}]}`),
		doc(`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "depends_on": ["b"]}, {"id": "b", "title": "B", "depends_on": ["a"]}]}`),
		doc(`{"id": "a", "title": "A", "status": "blocked", "blocked_reason": "x", "attempts": 0, "max_attempts": 1}`),
		doc(`{"id": "a", "title": "A", "acceptance": [], "goal": "", "blocked_reason": ""}`),
		doc(`{"id": "a", "title": "\u2028\ud800<>&", "goal": "\u0000"}`),
		`{"version": 1, "root": {"id": "a", "title": "A"}, "root": {}}`,
		`{"version": 1}`,
		`{"version": 1, "root": {"id": "a", "title": "A", "children": [{"id": "a", "title": "A"}, 7]}}`,
	}
}
