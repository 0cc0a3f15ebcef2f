package prompt

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

var wantHeadings = []string{
	"# Runner Contract",
	"# Goal",
	"# History (previous attempt)",
	"# Failure (previous attempt)",
	"# Selected Node",
	"# Tree Summary",
	"# Assumptions",
	"# Open Questions",
	"# Output Contract",
}

var wantKeys = []string{"contract", "goal", "history", "failure", "selected", "tree", "assumptions", "questions", "output"}

var wantSources = []string{"builtin", "context/goal.md", "context/history.md", "context/failure.md", "tree.json", "tree.json", "state/assumptions.md", "state/questions.md", "builtin"}

func TestBuildSectionOrderAndHeadings(t *testing.T) {
	pack, err := Build(calcInput(t))
	if err != nil {
		t.Fatal(err)
	}
	// The failure log holds a "# github.com/..." line, but inside a fence.
	got := headings(stripFences(pack.Text))
	if strings.Join(got, "|") != strings.Join(wantHeadings, "|") {
		t.Errorf("headings:\n got %q\nwant %q", got, wantHeadings)
	}
	if len(pack.Sections) != len(wantKeys) {
		t.Fatalf("%d section reports, want %d", len(pack.Sections), len(wantKeys))
	}
	sum := 0
	for i, s := range pack.Sections {
		if s.Key != wantKeys[i] || s.Source != wantSources[i] || s.State != StateIncluded {
			t.Errorf("section %d = %+v, want key %s source %s included", i, s, wantKeys[i], wantSources[i])
		}
		if !strings.HasPrefix(wantHeadings[i], "# "+s.Name) {
			t.Errorf("section %d name %q does not match heading %q", i, s.Name, wantHeadings[i])
		}
		if s.Tokens != (s.Bytes+3)/4 {
			t.Errorf("section %s: tokens %d for %d bytes", s.Key, s.Tokens, s.Bytes)
		}
		sum += s.Bytes
	}
	if want := sum + (len(pack.Sections)-1)*len(Separator); pack.Total != want || pack.Total != len(pack.Text) {
		t.Errorf("total %d, len(text) %d, sections+separators %d", pack.Total, len(pack.Text), want)
	}
	if !strings.HasPrefix(pack.Text, runnerContract(calcProtect, "")) || !strings.HasSuffix(pack.Text, outputContract) {
		t.Error("the fixed bookends are not at the start and the end")
	}
	if !strings.Contains(pack.Text, "```text\n# github.com/x/calc/ops\nops/div.go:3:5: undefined: big\n```\n") {
		t.Errorf("failure log is not fenced verbatim:\n%s", pack.Text)
	}
}

// stripFences removes fenced blocks so that headings inside logs do not count.
func stripFences(s string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func TestSelectedNodeSection(t *testing.T) {
	pack, err := Build(calcInput(t))
	if err != nil {
		t.Fatal(err)
	}
	want := "# Selected Node\n\npath: calc/ops\nid: ops\ntitle: Operations\ngoal: Implement + - * /.\n  Division by zero is an error.\nattempt: 2 of 5\ndepends_on: parse (done)\nacceptance:\n- go test ./ops passes\n- calc 6 / 0 exits 2\n"
	if !strings.Contains(pack.Text, want) {
		t.Errorf("selected node section missing; want\n%s\nin\n%s", want, pack.Text)
	}

	// Without an index and a path, both are derived from the tree.
	in := calcInput(t)
	in.Index, in.SelectedPath = nil, ""
	pack, err = Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pack.Text, want) {
		t.Errorf("selected node section without index differs:\n%s", pack.Text)
	}
}

func TestBuildOmitsEmptySections(t *testing.T) {
	for i, key := range wantKeys {
		if key == "contract" || key == "output" || key == "selected" || key == "tree" {
			continue
		}
		t.Run(key, func(t *testing.T) {
			in := calcInput(t)
			switch key {
			case "goal":
				in.Goal = ""
			case "history":
				in.History = "\n\n"
			case "failure":
				in.Failure = ""
			case "assumptions":
				in.Assumptions = "# Assumptions\n\n" // a heading alone is empty
			case "questions":
				in.Questions = ""
			}
			pack, err := Build(in)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(stripFences(pack.Text), wantHeadings[i]+"\n") {
				t.Errorf("empty section %s still has its heading", key)
			}
			if got := pack.Sections[i]; got.State != StateEmpty || got.Bytes != 0 {
				t.Errorf("report %+v, want state empty and 0 bytes", got)
			}
			if strings.Contains(pack.Text, "\n\n\n") {
				t.Error("omitted section left a double blank line")
			}
		})
	}
	t.Run("tree", func(t *testing.T) {
		in := calcInput(t)
		in.Tree = nil
		pack, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(pack.Text, "# Tree Summary") || pack.Sections[5].State != StateEmpty {
			t.Errorf("tree section present without a tree: %+v", pack.Sections[5])
		}
	})
}

func TestHeadingsAreNotDoubled(t *testing.T) {
	tests := []struct {
		name, key, content, want string
	}{
		{"goal file heading", "goal", "# Goal\n\ntitle: x\n", "# Goal\n\ntitle: x\n"},
		{"history suffix kept", "history", "# History (previous attempt)\n\nsummary\n", "# History (previous attempt)\n\n> summary\n"},
		{"no heading", "history", "just text\n", "# History\n\n> just text\n"},
		{"alias", "questions", "# Questions\n\n- why?\n", "# Open Questions\n\n> - why?\n"},
		{"other heading is content", "assumptions", "# Notes from Bob\n- a\n", "# Assumptions\n\n> # Notes from Bob\n> - a\n"},
		{"similar word is content", "goal", "# Goals\n- a\n", "# Goal\n\n\\# Goals\n- a\n"},
		{"case and CRLF", "goal", "# GOAL\r\n\r\ntitle: y\r\n", "# Goal\n\ntitle: y\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := calcInput(t)
			switch tt.key {
			case "goal":
				in.Goal = tt.content
			case "history":
				in.History = tt.content
			case "questions":
				in.Questions = tt.content
			case "assumptions":
				in.Assumptions = tt.content
			}
			pack, err := Build(in)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(pack.Text, "\n"+tt.want+"\n") {
				t.Errorf("want section\n%s\nin\n%s", tt.want, pack.Text)
			}
		})
	}
}

func TestBudgetBelowMinimumIsAnError(t *testing.T) {
	in := calcInput(t)
	in.Budget = MinBudget(calcProtect) - 1
	_, err := Build(in)
	if err == nil || !strings.Contains(err.Error(), "prompt.budget") || !strings.Contains(err.Error(), fmt.Sprint(MinBudget(calcProtect))) {
		t.Fatalf("err = %v, want an error naming prompt.budget and %d", err, MinBudget(calcProtect))
	}
	in.Budget = MinBudget(calcProtect)
	in.Goal = strings.Repeat("goal text ", 5000)
	pack, err := Build(in)
	if err != nil {
		t.Fatalf("budget = MinBudget: %v", err)
	}
	if pack.Total > MinBudget(calcProtect) {
		t.Errorf("total %d > budget %d", pack.Total, MinBudget(calcProtect))
	}
}

func TestFixedTextsAreCompact(t *testing.T) {
	if n := len(runnerContract(nil, "")) + len(outputContract); n > 3000 {
		t.Errorf("fixed texts take %d bytes, want well under 3 KiB", n)
	}
	for _, s := range []string{"RUNNER_OUTPUT_FILE", `"done"`, `"retry"`, `"blocked"`, `"decomposed"`, "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", "depends_on", "Example:"} {
		if !strings.Contains(outputContract, s) {
			t.Errorf("output contract does not mention %s", s)
		}
	}
	for _, s := range []string{"fresh session", "Selected Node", "`.runner/`", "decompose", "blocked", "guard",
		"`.runner/config.toml`", "`.runner/tree.json`", "`.runner/state/`", "fails the attempt", "reverts", "the goal and the checks disagree", "cannot be done as written"} {
		if !strings.Contains(runnerContract(calcProtect, ""), s) {
			t.Errorf("runner contract does not mention %s", s)
		}
	}
}

// sized returns an Input whose optional sections have roughly the given
// sizes in bytes.
func sized(t testing.TB, sizes map[string]int) Input {
	t.Helper()
	in := calcInput(t)
	fill := func(key, word string) string {
		n := sizes[key]
		if n == 0 {
			return ""
		}
		return strings.Repeat(word, n/len(word)+1)[:n]
	}
	in.History = fill("history", "history ")
	in.Failure = fill("failure", "failure\n")
	in.Assumptions = fill("assumptions", "- assumption\n")
	in.Questions = fill("questions", "- question?\n")
	return in
}

func TestDropOrder(t *testing.T) {
	// Failure is the largest and tree the smallest optional section, so an
	// order by size would differ from the required order.
	in := sized(t, map[string]int{"history": 3000, "failure": 9000, "assumptions": 2000, "questions": 2500})
	in.Budget = 1 << 20
	full, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	size := map[string]int{}
	for _, s := range full.Sections {
		size[s.Key] = s.Bytes
	}
	if size["tree"] == 0 || size["tree"] >= size["failure"] {
		t.Fatalf("test setup: tree section %d bytes, failure %d", size["tree"], size["failure"])
	}
	order := []string{"tree", "assumptions", "questions", "history", "failure"}
	for k := 0; k <= len(order); k++ {
		// The largest budget that needs exactly k drops: the size after k
		// drops; one byte less needs k+1.
		budget := full.Total
		for _, key := range order[:k] {
			budget -= size[key] + len(Separator)
		}
		for _, b := range []int{budget, budget + 1} {
			if k > 0 && b == budget+1 {
				b = budget + size[order[k-1]] // still one byte short of keeping order[k-1]
			}
			t.Run(fmt.Sprintf("drops=%d/budget=%d", k, b), func(t *testing.T) {
				in.Budget = b
				pack, err := Build(in)
				if err != nil {
					t.Fatal(err)
				}
				for i, key := range order {
					got := stateOf(pack, key)
					want := StateIncluded
					if i < k {
						want = StateDropped
					}
					if got != want {
						t.Errorf("%s: %s, want %s", key, got, want)
					}
				}
				for _, key := range []string{"contract", "goal", "selected", "output"} {
					if got := stateOf(pack, key); got != StateIncluded {
						t.Errorf("required %s: %s", key, got)
					}
				}
				if pack.Total > b {
					t.Errorf("total %d > budget %d", pack.Total, b)
				}
			})
		}
	}
}

func stateOf(p *Pack, key string) string {
	for _, s := range p.Sections {
		if s.Key == key {
			return s.State
		}
	}
	return "missing"
}

func TestTruncationBackwardsAtUTF8Boundaries(t *testing.T) {
	in := calcInput(t)
	// Multi-byte text without newlines, so cuts land inside runes if done
	// carelessly.
	in.Goal = "# Goal\n\n" + strings.Repeat("ü€😀", 800)
	in.Selected.Goal = strings.Repeat("€ü", 1500)
	defer func() { in.Selected.Goal = "Implement + - * /.\nDivision by zero is an error." }()

	full := in
	full.Budget = 1 << 20
	whole, err := Build(full)
	if err != nil {
		t.Fatal(err)
	}
	var goalBytes, selBytes int
	for _, s := range whole.Sections {
		switch s.Key {
		case "goal":
			goalBytes = s.Bytes
		case "selected":
			selBytes = s.Bytes
		}
	}
	required := len(runnerContract(calcProtect, "")) + len(outputContract) + goalBytes + selBytes + 3*len(Separator)

	tests := []struct {
		name           string
		budget         int
		goal, selected string
	}{
		{"fits after drops", required, StateIncluded, StateIncluded},
		{"selected cut a little", required - 100, StateIncluded, StateTruncated},
		{"selected cut to nothing, goal cut", required - selBytes - 500, StateTruncated, StateTruncated},
		{"minimum", MinBudget(calcProtect), StateTruncated, StateTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in.Budget = tt.budget
			pack, err := Build(in)
			if err != nil {
				t.Fatal(err)
			}
			if pack.Total > tt.budget {
				t.Fatalf("total %d > budget %d", pack.Total, tt.budget)
			}
			if !utf8.ValidString(pack.Text) {
				t.Fatal("text is not valid UTF-8")
			}
			if g, s := stateOf(pack, "goal"), stateOf(pack, "selected"); g != tt.goal || s != tt.selected {
				t.Errorf("goal %s, selected %s; want %s, %s", g, s, tt.goal, tt.selected)
			}
			for _, key := range []string{"goal", "selected"} {
				if stateOf(pack, key) == StateTruncated {
					text := sectionText(t, pack, key)
					if !strings.HasSuffix(text, "\n"+TruncatedMarker+"\n") {
						t.Errorf("%s does not end with the marker: %q", key, text[max(0, len(text)-40):])
					}
				}
			}
			if !strings.HasPrefix(pack.Text, runnerContract(calcProtect, "")) || !strings.HasSuffix(pack.Text, outputContract) {
				t.Error("a fixed bookend was cut")
			}
		})
	}
}

// sectionText returns the text of section key in p, found by its heading.
func sectionText(t *testing.T, p *Pack, key string) string {
	t.Helper()
	var idx []int
	for i, s := range p.Sections {
		if s.State == StateIncluded || s.State == StateTruncated {
			idx = append(idx, i)
		}
	}
	off := 0
	for _, i := range idx {
		s := p.Sections[i]
		if s.Key == key {
			return p.Text[off : off+s.Bytes]
		}
		off += s.Bytes + len(Separator)
	}
	t.Fatalf("section %s not shown", key)
	return ""
}

func TestTruncationPrefersLineBoundary(t *testing.T) {
	var lines []string
	for i := range 400 {
		lines = append(lines, fmt.Sprintf("- line %03d of the goal", i))
	}
	in := calcInput(t)
	in.Goal = strings.Join(lines, "\n")
	in.Budget = MinBudget(calcProtect) + 2000
	pack, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	text := sectionText(t, pack, "goal")
	body := strings.TrimSuffix(text, "\n"+TruncatedMarker+"\n")
	last := body[strings.LastIndexByte(body, '\n')+1:]
	if !strings.HasPrefix(last, "- line ") || !strings.HasSuffix(last, "of the goal") {
		t.Errorf("cut inside a line: last kept line %q", last)
	}
}

// TestBudgetProperty builds prompts with random section sizes for many
// budgets and checks the invariants of every result.
func TestBudgetProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"ascii ", "ünï ", "€ ", "😀", "line\n", "\n\n", "`"}
	text := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String()
	}
	for budget := MinBudget(calcProtect); budget <= 50<<10; budget += 97 + rng.IntN(400) {
		in := calcInput(t)
		in.Goal = text(rng.IntN(20000))
		in.History = text(rng.IntN(20000))
		in.Failure = text(rng.IntN(20000))
		in.Assumptions = text(rng.IntN(10000))
		in.Questions = text(rng.IntN(10000))
		in.Budget = budget
		pack, err := Build(in)
		if err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		if pack.Total > budget || pack.Total != len(pack.Text) {
			t.Fatalf("budget %d: total %d, len %d", budget, pack.Total, len(pack.Text))
		}
		if !utf8.ValidString(pack.Text) {
			t.Fatalf("budget %d: invalid UTF-8", budget)
		}
		if !strings.HasPrefix(pack.Text, runnerContract(calcProtect, "")) || !strings.HasSuffix(pack.Text, outputContract) {
			t.Fatalf("budget %d: bookends missing", budget)
		}
		truncated, droppable := false, true
		for _, s := range pack.Sections {
			switch s.State {
			case StateTruncated:
				truncated = true
			case StateIncluded:
				if s.Key == "tree" || s.Key == "assumptions" || s.Key == "questions" || s.Key == "history" || s.Key == "failure" {
					droppable = false
				}
			}
			if (s.Key == "contract" || s.Key == "goal" || s.Key == "selected" || s.Key == "output") && s.State == StateDropped {
				t.Fatalf("budget %d: required %s dropped", budget, s.Key)
			}
		}
		if truncated && !droppable {
			t.Fatalf("budget %d: truncated while an optional section is still included", budget)
		}
	}
}

// fakeRedactor replaces "SECRET-<digits>" tokens and records what it saw.
type fakeRedactor struct {
	seen   []string
	expand int // bytes of each replacement
}

func (f *fakeRedactor) Redact(s string) (string, map[string]int) {
	f.seen = append(f.seen, s)
	n := strings.Count(s, "SECRET-42")
	repl := "[REDACTED:fake]"
	if f.expand > 0 {
		repl = "[REDACTED:" + strings.Repeat("x", f.expand) + "]"
	}
	return strings.ReplaceAll(s, "SECRET-42", repl), map[string]int{"fake": n}
}

func TestRedactionBeforeBudget(t *testing.T) {
	in := calcInput(t)
	in.Goal += "token SECRET-42\n"
	in.History += "used SECRET-42 twice: SECRET-42\n"
	in.Assumptions += "- key SECRET-42\n"
	in.Tree.Root.Children[0].Title = "Parse SECRET-42"
	red := &fakeRedactor{}
	in.Redactor = red
	pack, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(pack.Text, "SECRET-42") {
		t.Errorf("secret left in the prompt:\n%s", pack.Text)
	}
	if got := pack.Redactions["fake"]; got != 5 {
		t.Errorf("redactions = %v, want fake: 5", pack.Redactions)
	}
	for _, s := range red.seen {
		if strings.Contains(s, "# Runner Contract") || strings.Contains(s, "# Output Contract") {
			t.Error("a fixed bookend was passed to the redactor")
		}
	}

	// Redaction that grows the text happens before budgeting, so the
	// result still fits.
	in = calcInput(t)
	in.History = strings.Repeat("SECRET-42 ", 300)
	red = &fakeRedactor{expand: 100}
	in.Redactor = red
	in.Budget = MinBudget(calcProtect) + 3000
	pack, err = Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if pack.Total > in.Budget {
		t.Errorf("total %d > budget %d after an expanding redaction", pack.Total, in.Budget)
	}
	if pack.Redactions["fake"] != 300 || stateOf(pack, "history") != StateDropped {
		t.Errorf("redactions %v, history %s; want 300 and dropped", pack.Redactions, stateOf(pack, "history"))
	}
}

func TestNoRedactorGivesEmptyCounts(t *testing.T) {
	pack, err := Build(calcInput(t))
	if err != nil {
		t.Fatal(err)
	}
	if pack.Redactions == nil || len(pack.Redactions) != 0 {
		t.Errorf("redactions = %#v, want an empty map", pack.Redactions)
	}
}

func TestBuildWithoutSelectedNode(t *testing.T) {
	in := calcInput(t)
	in.Selected = nil
	if _, err := Build(in); err == nil {
		t.Error("no error without a selected node")
	}
}
