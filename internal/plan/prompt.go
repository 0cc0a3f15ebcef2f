package plan

import (
	"fmt"
	"strings"

	"github.com/runner-cli/runner/internal/prompt"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/textfmt"
	"github.com/runner-cli/runner/internal/tree"
)

// PromptInput is what a planning prompt is built from.
type PromptInput struct {
	Documents []Document
	// Tree is the current tree (nil when there is none); Node the task
	// to decompose in it, nil for a plan of the whole tree.
	Tree               *tree.Tree
	Index              *tree.Index // indexes Tree; nil: built when needed
	Node               *tree.Node
	DefaultMaxAttempts int
	Budget             int // prompt.budget, for the whole text
	Redactor           prompt.Redactor
}

// Section keys of a planning prompt, in order; a document section
// comes once per document.
const (
	KeyContract = "contract"
	KeyTask     = "task"
	KeyDocument = "document"
	KeyTree     = "tree"
	KeyOutput   = "output"
)

// section is one section of a planning prompt.
type section struct {
	report prompt.SectionReport
	text   string // heading to final newline
}

// BuildPrompt builds the planning prompt: the Planning Contract, the
// Task to Decompose (with a Node), each document in a code fence, the
// Current Tree's outline (when there is a tree) and the Output Contract.
// Every section but the two contracts is scrubbed first. Over
// in.Budget, the Current Tree is dropped; the documents are never cut:
// when they do not fit, BuildPrompt returns a *TooLargeError naming each
// with its size. Pack.Sections says what happened to each section, for
// context.json.
func BuildPrompt(in PromptInput) (*prompt.Pack, error) {
	pack := &prompt.Pack{Budget: in.Budget, Redactions: map[string]int{}}
	scrubbed := func(s string) string {
		if in.Redactor == nil || s == "" {
			return s
		}
		out, counts := in.Redactor.Redact(s)
		for rule, n := range counts {
			pack.Redactions[rule] += n
		}
		return out
	}
	node := in.Node != nil
	secs := []*section{fixed(KeyContract, "Planning Contract", contract(node))}
	ix := in.Index
	if in.Tree != nil && ix == nil {
		ix = tree.NewIndex(in.Tree)
	}
	if node {
		secs = append(secs, body(KeyTask, "Task to Decompose", "tree.json", "", scrubbed(taskText(in.Node, ix))))
	}
	for i, d := range in.Documents {
		name := "Document: " + textfmt.OneLine(d.Name, 200)
		if len(in.Documents) > 1 {
			name = fmt.Sprintf("Document %d of %d: %s", i+1, len(in.Documents), textfmt.OneLine(d.Name, 200))
		}
		text := scrubbed(strings.TrimRight(textfmt.NormalizeNewlines(d.Text), " \t\n"))
		secs = append(secs, body(KeyDocument, name, d.Name, prompt.Fence(text), text))
	}
	var treeSec *section
	if in.Tree != nil && in.Tree.Root != nil {
		selected := ""
		if node {
			selected = in.Node.ID
		}
		outline, _, _ := prompt.TreeSummary(in.Tree, ix, selected, in.DefaultMaxAttempts, 0)
		treeSec = body(KeyTree, "Current Tree", "tree.json", "", scrubbed(outline))
		secs = append(secs, treeSec)
	}
	secs = append(secs, fixed(KeyOutput, "Output Contract", outputContract(node)))

	if total(secs) > in.Budget && treeSec != nil {
		treeSec.report.State = prompt.StateDropped
	}
	if need := total(secs); need > in.Budget {
		return nil, tooLarge(secs, need, in.Budget)
	}
	var b strings.Builder
	for _, s := range secs {
		pack.Sections = append(pack.Sections, s.report)
		if s.report.State != prompt.StateIncluded {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(prompt.Separator)
		}
		b.WriteString(s.text)
	}
	pack.Text = b.String()
	pack.Total = len(pack.Text)
	return pack, nil
}

// fixed is one of the two contracts: builtin text with its heading.
func fixed(key, name, text string) *section {
	return &section{text: text, report: prompt.SectionReport{Name: name, Key: key, Source: "builtin",
		Bytes: len(text), Tokens: prompt.Tokens(len(text)), State: prompt.StateIncluded}}
}

// body is a section with a heading and a body, in a code fence when
// fence is not "". An empty body makes an empty section, left out.
func body(key, name, source, fence, text string) *section {
	s := &section{report: prompt.SectionReport{Name: name, Key: key, Source: source, State: prompt.StateEmpty}}
	text = strings.TrimRight(text, " \t\n")
	if text == "" {
		return s
	}
	if fence != "" {
		text = fence + "\n" + text + "\n" + fence
	}
	s.text = "# " + name + "\n\n" + text + "\n"
	s.report.Bytes, s.report.Tokens, s.report.State = len(s.text), prompt.Tokens(len(s.text)), prompt.StateIncluded
	return s
}

// total is the size of the prompt the included sections make.
func total(secs []*section) int {
	n, count := 0, 0
	for _, s := range secs {
		if s.report.State == prompt.StateIncluded {
			n += len(s.text)
			count++
		}
	}
	return n + max(count-1, 0)*len(prompt.Separator)
}

// taskText renders the Task to Decompose: one field per line, as the
// loop's Selected Node shows a task.
func taskText(n *tree.Node, ix *tree.Index) string {
	var b strings.Builder
	path := n.ID
	if ix != nil {
		path = ix.Path(n.ID)
	}
	textfmt.Field(&b, "path", path)
	textfmt.Field(&b, "id", n.ID)
	textfmt.Field(&b, "title", n.Title)
	textfmt.Field(&b, "goal", n.Goal)
	if len(n.DependsOn) > 0 {
		deps := make([]string, len(n.DependsOn))
		for i, id := range n.DependsOn {
			status := "unknown"
			if dep := ix.Node(id); dep != nil {
				status = string(dep.EffectiveStatus())
			}
			deps[i] = id + " (" + status + ")"
		}
		textfmt.Field(&b, "depends_on", strings.Join(deps, ", "))
	}
	textfmt.List(&b, "acceptance", n.Acceptance)
	var checks []string
	for _, c := range n.Checks {
		checks = append(checks, c.Name+": "+c.Run)
	}
	textfmt.List(&b, "checks", checks)
	return b.String()
}

// TooLargeError says that the documents do not fit the prompt budget.
type TooLargeError struct {
	Need, Budget int
	// Documents are the documents' sections, with their sizes in the
	// prompt (heading and fence included); Rest is what the other
	// sections take.
	Documents []state.PlanDocument
	Rest      int
}

func (e *TooLargeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the documents do not fit the prompt budget: the planning prompt needs %d bytes and prompt.budget is %d. The documents take ",
		e.Need, e.Budget)
	for i, d := range e.Documents {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d bytes", d.Name, d.Bytes)
	}
	fmt.Fprintf(&b, "; the rest of the prompt %d. Raise prompt.budget in .runner/config.toml (budget = \"%dKiB\" holds them all), "+
		"or plan from a shorter document: a summary, or one part at a time (runner plan --node ID DOC)", e.Rest, (e.Need+1023)/1024)
	return b.String()
}

func tooLarge(secs []*section, need, budget int) *TooLargeError {
	e := &TooLargeError{Need: need, Budget: budget, Rest: need}
	for _, s := range secs {
		if s.report.Key == KeyDocument && s.report.State == prompt.StateIncluded {
			size := len(s.text) + len(prompt.Separator)
			e.Documents = append(e.Documents, state.PlanDocument{Name: s.report.Source, Bytes: size})
			e.Rest -= size
		}
	}
	return e
}
