package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/prompt"
	"github.com/runner-cli/runner/internal/tree"
)

// fakeRedactor redacts the word "hunter2".
type fakeRedactor struct{}

func (fakeRedactor) Redact(s string) (string, map[string]int) {
	n := strings.Count(s, "hunter2")
	if n == 0 {
		return s, nil
	}
	return strings.ReplaceAll(s, "hunter2", "[REDACTED:test]"), map[string]int{"test": n}
}

func mustTree(t *testing.T, data string) *tree.Tree {
	t.Helper()
	tr, err := tree.Parse("tree.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

const smallTree = `{"version": 1, "root": {"id": "app", "title": "App", "children": [
  {"id": "done-one", "title": "Done one", "status": "done"},
  {"id": "big", "title": "Big", "goal": "All of it.", "acceptance": ["it works"], "depends_on": ["done-one"]}
]}}`

func keys(p *prompt.Pack) string {
	var out []string
	for _, s := range p.Sections {
		out = append(out, s.Key+":"+s.State)
	}
	return strings.Join(out, " ")
}

func TestBuildPromptWhole(t *testing.T) {
	docs := []Document{{Name: "docs/prd.md", Text: "# PRD\n\nThe password is hunter2.\n```go\ncode\n```\n"}, {Name: "stdin", Text: "More."}}
	p, err := BuildPrompt(PromptInput{Documents: docs, Tree: mustTree(t, smallTree), Budget: 40960, Redactor: fakeRedactor{}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(p), "contract:included document:included document:included tree:included output:included"; got != want {
		t.Errorf("sections %s, want %s", got, want)
	}
	for _, want := range []string{
		"# Planning Contract\n", "the whole task tree",
		"# Document 1 of 2: docs/prd.md\n\n````\n# PRD\n", "[REDACTED:test]",
		"# Document 2 of 2: stdin\n\n```\nMore.\n```\n",
		"# Current Tree\n", "[x] done-one",
		"# Output Contract\n", "Do not repeat the root",
	} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p.Text)
		}
	}
	if strings.Contains(p.Text, "hunter2") || p.Redactions["test"] != 1 {
		t.Errorf("the secret is not scrubbed (redactions %v)", p.Redactions)
	}
	if strings.Contains(p.Text, "Task to Decompose\n\n") {
		t.Error("a whole plan has no task section")
	}
	if p.Total != len(p.Text) || p.Sections[1].Source != "docs/prd.md" || p.Sections[1].Bytes == 0 {
		t.Errorf("pack report: total %d of %d, %+v", p.Total, len(p.Text), p.Sections[1])
	}
}

func TestBuildPromptNode(t *testing.T) {
	tr := mustTree(t, smallTree)
	ix := tree.NewIndex(tr)
	p, err := BuildPrompt(PromptInput{Tree: tr, Index: ix, Node: ix.Node("big"), Budget: 40960})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(p), "contract:included task:included tree:included output:included"; got != want {
		t.Errorf("sections %s, want %s", got, want)
	}
	for _, want := range []string{"the decomposition of the Task to Decompose", "# Task to Decompose\n\npath: app/big\nid: big\n",
		"depends_on: done-one (done)", "- it works", "[>] big", "the subtasks of the Task to Decompose"} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p.Text)
		}
	}
}

func TestBuildPromptBudget(t *testing.T) {
	tr := mustTree(t, smallTree)
	doc := Document{Name: "prd.md", Text: strings.Repeat("word ", 400)}
	full, err := BuildPrompt(PromptInput{Documents: []Document{doc}, Tree: tr, Budget: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	// Just too small for the tree: it is dropped, the document stays whole.
	p, err := BuildPrompt(PromptInput{Documents: []Document{doc}, Tree: tr, Budget: full.Total - 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(p), "contract:included document:included tree:dropped output:included"; got != want {
		t.Errorf("sections %s, want %s", got, want)
	}
	if !strings.Contains(p.Text, doc.Text[:len(doc.Text)-1]) || p.Total > full.Total-1 {
		t.Errorf("the document was cut, or the prompt is over budget (%d)", p.Total)
	}
	// Too small for the document: refused, naming it and its size.
	_, err = BuildPrompt(PromptInput{Documents: []Document{doc, {Name: "b.md", Text: "b"}}, Tree: tr, Budget: 2000})
	var tl *TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("err = %v, want a *TooLargeError", err)
	}
	if tl.Budget != 2000 || len(tl.Documents) != 2 || tl.Documents[0].Name != "prd.md" || tl.Documents[0].Bytes < 2000 ||
		tl.Need != tl.Rest+tl.Documents[0].Bytes+tl.Documents[1].Bytes {
		t.Errorf("TooLargeError = %+v", tl)
	}
	for _, want := range []string{"prompt.budget is 2000", "prd.md ", "b.md ", "budget = \""} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
