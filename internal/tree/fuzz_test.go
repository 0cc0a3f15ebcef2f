package tree

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, name := range []string{"messy.json", "canonical.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		doc(decompTree),
		doc(`{"id": "a", "title": "A", "children": [{"id": "b", "title": "B", "depends_on": ["a"]}]}`),
		doc(`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "depends_on": ["b"]}, {"id": "b", "title": "B", "depends_on": ["a"]}]}`),
		doc(`{"id": "r", "title": "R", "children": [{"id": "a", "title": "A", "depends_on": ["mul"]}, {"id": "ops", "title": "O", "depends_on": ["a"], "children": [{"id": "mul", "title": "M"}]}]}`),
		doc(`{"id": "a", "title": "A", "status": "blocked", "blocked_reason": "x", "attempts": 0, "max_attempts": 1}`),
		doc(`{"id": "a", "title": "A", "acceptance": [], "goal": "", "blocked_reason": ""}`),
		doc(`{"id": "a", "title": "\u2028\ud800<>&", "goal": "\u0000"}`),
		doc(`{"id": "a", "title": "A", "attempts": -0, "max_attempts": 1e3}`),
		`{"version": 1, "root": {"id": "a", "title": "A"}, "root": {}}`,
		`{"version": 1}`,
		`[]`,
		`{"version": 1, "root": {"id": "a", "title": "A", "children": [{"id": "a", "title": "A"}, 7]}}`,
		nested(3),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Parse("f.json", data)
		if err != nil {
			var verr *ValidationError
			if !errors.As(err, &verr) || len(verr.Problems) == 0 {
				t.Fatalf("Parse error is not a non-empty *ValidationError: %#v", err)
			}
			return
		}
		if err := tr.Validate("f.json"); err != nil {
			t.Fatalf("Parse accepted a tree that Validate rejects: %v", err)
		}
		out := Marshal(tr)
		if std := stdMarshal(t, tr); !bytes.Equal(out, std) {
			t.Fatalf("Marshal differs from encoding/json:\n%s\n%s", out, std)
		}
		if lib := libraryMarshal(t, tr); !bytes.Equal(out, lib) {
			t.Fatalf("Marshal differs from go-json-experiment/json:\n%s\n%s", out, lib)
		}
		back, err := Parse("f.json", out)
		if err != nil {
			t.Fatalf("canonical form does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(back, tr) {
			t.Fatalf("canonical form reads back differently:\n%s", out)
		}
		if again := Marshal(back); !bytes.Equal(again, out) {
			t.Fatalf("Marshal is not stable:\n%s\n%s", out, again)
		}
		ix := NewIndex(tr)
		sel := Select(tr, ix, 3)
		if sel.State == Selectable && (sel.Node == nil || !sel.Node.IsLeaf()) {
			t.Fatalf("selected %+v", sel.Node)
		}
		tr.Normalize()
		if err := tr.Validate("f.json"); err != nil {
			t.Fatalf("Normalize made the tree invalid: %v", err)
		}
	})
}

// treeFromBytes builds a small tree from fuzz input: node i > 0 hangs
// below an earlier node, and every node depends on up to two others, so
// that dependencies on ancestors, descendants and cycles all occur.
func treeFromBytes(data []byte) *Tree {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		c := int(data[0])
		data = data[1:]
		return c
	}
	n := 1 + next()%12
	nodes := make([]*Node, n)
	for i := range n {
		nodes[i] = &Node{ID: fmt.Sprintf("n%d", i), Title: "T"}
		if i > 0 {
			p := nodes[next()%i]
			p.Children = append(p.Children, nodes[i])
		}
	}
	for i := range n {
		k := next() % 6 // mostly no dependencies
		for range max(k-3, 0) {
			nodes[i].DependsOn = append(nodes[i].DependsOn, nodes[next()%n].ID)
		}
	}
	return &Tree{Version: Version, Root: nodes[0]}
}

// checkDeadlockAgreement runs a tree to completion, marking each selected
// leaf done, and checks that it gets stuck exactly when Validate reports a
// problem (all of which are dependency problems here).
func checkDeadlockAgreement(t *testing.T, tr *Tree) {
	t.Helper()
	verr := tr.Validate("")
	ix := NewIndex(tr)
	for range ix.Len() + 1 {
		sel := Select(tr, ix, 3)
		switch sel.State {
		case Selectable:
			sel.Node.Status = StatusDone
			continue
		case Complete:
			if verr != nil {
				t.Fatalf("ran to completion, but Validate said:\n%v\n%s", verr, Marshal(tr))
			}
		case Stuck:
			if verr == nil {
				t.Fatalf("stuck (%v), but Validate accepted the tree:\n%s", sel.Skipped, Marshal(tr))
			}
		}
		return
	}
	t.Fatalf("did not finish after %d selections", ix.Len()+1)
}

func TestDeadlockDetectionMatchesSelection(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 64)
	for range 5000 {
		for i := range buf {
			buf[i] = byte(rng.IntN(256))
		}
		checkDeadlockAgreement(t, treeFromBytes(buf))
	}
}

func FuzzDeadlock(f *testing.F) {
	f.Add([]byte{3, 0, 0, 5, 1, 5, 0, 0})
	f.Add([]byte{5, 0, 1, 1, 0, 4, 2, 5, 3, 0, 0, 5, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDeadlockAgreement(t, treeFromBytes(data))
	})
}
