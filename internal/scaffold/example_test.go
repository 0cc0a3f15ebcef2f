package scaffold

import (
	"reflect"
	"testing"

	"github.com/runner-cli/runner/internal/tree"
)

func TestIsExampleAndLeftovers(t *testing.T) {
	for _, v := range variants {
		ex, err := tree.Parse("tree.json", exampleTree(v))
		if err != nil {
			t.Fatal(err)
		}
		if !IsExample(ex) || len(ExampleLeftovers(ex)) != 3 {
			t.Errorf("variant %q: IsExample %v, leftovers %q", v, IsExample(ex), ExampleLeftovers(ex))
		}
		// What the runner writes in its own fields keeps it the example.
		run := ex.Clone()
		run.Root.Children[0].Status, run.Root.Children[1].Attempts = tree.StatusDone, 2
		if !IsExample(run) {
			t.Errorf("variant %q: a run's statuses made it a person's tree", v)
		}
		// A person's task beside the example's root and one of its tasks.
		mixed := ex.Clone()
		mixed.Root.Children[1] = &tree.Node{ID: "mine", Title: "Mine", Goal: "my goal"}
		if IsExample(mixed) {
			t.Errorf("variant %q: a tree with a person's task is still the example", v)
		}
		want := []string{"project", "project/first-task"}
		if got := ExampleLeftovers(mixed); !reflect.DeepEqual(got, want) {
			t.Errorf("variant %q: leftovers %q, want %q", v, got, want)
		}
	}
	own := &tree.Tree{Version: 1, Root: &tree.Node{ID: "calc", Title: "Calculator", Children: []*tree.Node{{ID: "readme", Title: "README"}}}}
	if IsExample(own) || ExampleLeftovers(own) != nil || IsExample(nil) {
		t.Error("a person's tree read as an example")
	}
	// The root alone: its title says to replace the tree.
	root := &tree.Tree{Version: 1, Root: &tree.Node{ID: "x", Title: ExampleTitle, Children: []*tree.Node{{ID: "a", Title: "A"}}}}
	if got := ExampleLeftovers(root); !reflect.DeepEqual(got, []string{"x"}) {
		t.Errorf("leftovers %q", got)
	}
}
