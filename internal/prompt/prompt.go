// Package prompt builds the prompt pack: the single string sent to the agent
// on each iteration. It assembles nine sections in a fixed order, scrubs
// secrets from every dynamic section, and fits the result within a byte
// budget by dropping optional sections and then truncating variable ones,
// reporting what happened to each section for the run's context.json.
package prompt

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/textfmt"
	"github.com/runner-cli/runner/internal/tree"
)

// Redactor scrubs secrets from a text. Redact returns the scrubbed text and
// the number of matches per rule.
type Redactor interface {
	Redact(s string) (string, map[string]int)
}

// Input is everything a prompt pack is built from.
type Input struct {
	Goal, History, Failure string // contents of context/goal.md, history.md, failure.md ("" = absent)
	Tree                   *tree.Tree
	Index                  *tree.Index // optional; must index Tree; saves walking the whole tree
	Selected               *tree.Node
	SelectedPath           string // "calc/ops"; derived from the tree when empty
	DefaultMaxAttempts     int
	Assumptions, Questions string // contents of state/assumptions.md, state/questions.md
	Budget                 int    // bytes, for the whole Text
	// Protect are the verify.protect globs, named in the Runner Contract
	// among the paths whose change fails the attempt.
	Protect  []string
	Redactor Redactor
	// Judges are the commands that will judge the selected node's work
	// (SPEC §18): the guards, its checks and its parents'.
	Judges []Judge
	// Removes are the tests the node's work may remove (its removes and
	// its ancestors'): Selected Node lists them.
	Removes []string
	// Spend is the Runner Contract's line on what the agent may spend
	// (package spend, ContractLine); "" without caps.
	Spend string
}

// Section states in a SectionReport.
const (
	StateIncluded  = "included"
	StateDropped   = "dropped"
	StateTruncated = "truncated"
	StateEmpty     = "empty"
)

// SectionReport says what happened to one section. Bytes and Tokens are the
// section's size in Text (heading included, separator not); for a dropped
// section they are the size it would have had.
type SectionReport struct {
	Name   string `json:"name"`
	Key    string `json:"key"`
	Source string `json:"source"`
	Bytes  int    `json:"bytes"`
	Tokens int    `json:"tokens"`
	State  string `json:"state"`
}

// Pack is a built prompt.
type Pack struct {
	Text       string
	Budget     int
	Total      int // len(Text)
	Sections   []SectionReport
	Redactions map[string]int // matches per redaction rule, summed over all sections
}

// Separator is written between two sections.
const Separator = "\n"

// TruncatedMarker ends every truncated section.
const TruncatedMarker = "[truncated]"

// Section keys, in prompt order.
const (
	KeyContract    = "contract"
	KeyGoal        = "goal"
	KeyHistory     = "history"
	KeyFailure     = "failure"
	KeySelected    = "selected"
	KeyTree        = "tree"
	KeyAssumptions = "assumptions"
	KeyQuestions   = "questions"
	KeyOutput      = "output"
)

// DropOrder lists the optional sections in the order they are dropped when
// the prompt is over budget.
var DropOrder = []string{KeyTree, KeyAssumptions, KeyQuestions, KeyHistory, KeyFailure}

// Tokens estimates the number of tokens in n bytes of text.
func Tokens(n int) int { return (n + 3) / 4 }

type sectionDef struct {
	key, name, source string
	aliases           []string // other names a file's own first heading may use
	required, fixed   bool
	fenced            bool // body is shown in a code fence (logs)
	// quoted: the body is the agent's own text (its summary, its notes),
	// shown as a quotation, every line after "> ".
	quoted bool
}

var sectionDefs = []sectionDef{
	{key: KeyContract, name: "Runner Contract", source: "builtin", required: true, fixed: true},
	{key: KeyGoal, name: "Goal", source: "context/goal.md", required: true},
	{key: KeyHistory, name: "History", source: "context/history.md", quoted: true},
	{key: KeyFailure, name: "Failure", source: "context/failure.md", fenced: true},
	{key: KeySelected, name: "Selected Node", source: "tree.json", required: true},
	{key: KeyTree, name: "Tree Summary", source: "tree.json"},
	{key: KeyAssumptions, name: "Assumptions", source: "state/assumptions.md", quoted: true},
	{key: KeyQuestions, name: "Open Questions", source: "state/questions.md", aliases: []string{"Questions"}, quoted: true},
	{key: KeyOutput, name: "Output Contract", source: "builtin", required: true, fixed: true},
}

// section is one section being laid out.
type section struct {
	def     sectionDef
	heading string // "# Name" plus a suffix taken from the file's own heading
	body    string // without heading, leading blank lines and trailing space
	fence   string // code fence around the body, "" when not fenced
	state   string
	text    string // rendered, ending in "\n"
}

// MinBudget is the smallest budget Build accepts, given the verify.protect
// globs the Runner Contract names: the two fixed bookends, the headings of
// the other required sections each with a truncation marker, and the
// separators between them.
func MinBudget(protect []string) int {
	n := len(runnerContract(protect, "")) + len(outputContract)
	for _, d := range sectionDefs {
		if d.required && !d.fixed {
			n += len(minimalText(d))
		}
	}
	return n + 3*len(Separator)
}

func minimalText(d sectionDef) string {
	return "# " + d.name + "\n\n" + TruncatedMarker + "\n"
}

// Build assembles the prompt pack for in.Selected.
//
// Every section but the two fixed bookends is first passed through
// in.Redactor (when set); the counts are summed into Pack.Redactions. Then,
// while the whole Text is over in.Budget, the optional sections are dropped
// in DropOrder; if it is still over, the variable sections are truncated
// from the last one before the Output Contract backwards, each cut at a
// UTF-8 boundary (a line boundary when one is near) and ending with
// TruncatedMarker. The failure log is shown in a code fence, so its own
// "# ..." lines do not read as prompt headings.
//
// Build returns an error when in.Budget is below MinBudget or no node is
// selected.
func Build(in Input) (*Pack, error) {
	if need := MinBudget(in.Protect) + len(spendLine(in.Spend)); in.Budget < need {
		return nil, fmt.Errorf("build prompt: prompt.budget is %d bytes, but the fixed sections and required headings need at least %d; raise prompt.budget in .runner/config.toml", in.Budget, need)
	}
	if in.Selected == nil {
		return nil, errors.New("build prompt: no node selected")
	}
	var want []string
	if in.Index == nil {
		want = in.Selected.DependsOn
	}
	sc := scan(in.Tree, in.Index, in.Selected.ID, want)
	treeText, _, _ := treeSummary(in.Tree, in.Selected.ID, in.DefaultMaxAttempts, TreeSummaryMaxBytes, sc)
	raw := map[string]string{
		KeyGoal:        in.Goal,
		KeyHistory:     in.History,
		KeyFailure:     in.Failure,
		KeySelected:    selectedText(in, sc),
		KeyTree:        treeText,
		KeyAssumptions: in.Assumptions,
		KeyQuestions:   in.Questions,
	}

	pack := &Pack{Budget: in.Budget, Redactions: map[string]int{}}
	secs := make([]*section, len(sectionDefs))
	for i, d := range sectionDefs {
		s := &section{def: d, state: StateIncluded}
		secs[i] = s
		if d.fixed {
			s.heading = "# " + d.name
			s.text = fixedText(d.key, in.Protect, in.Spend)
			continue
		}
		content := raw[d.key]
		if in.Redactor != nil && content != "" {
			red, counts := in.Redactor.Redact(content)
			content = red
			for rule, c := range counts {
				pack.Redactions[rule] += c
			}
		}
		s.heading, s.body = splitHeading(d, content)
		if s.body == "" {
			s.state = StateEmpty
			continue
		}
		switch {
		case d.fenced:
			s.fence = Fence(s.body)
		case d.quoted:
			s.body = Quote(s.body)
		default:
			s.body = Defuse(s.body)
		}
		s.text = s.render(s.heading, s.body, false)
	}

	fit(secs, in.Budget)

	var b strings.Builder
	first := true
	for _, s := range secs {
		rep := SectionReport{Name: s.def.name, Key: s.def.key, Source: s.def.source, State: s.state}
		if s.state != StateEmpty {
			rep.Bytes = len(s.text)
			rep.Tokens = Tokens(rep.Bytes)
		}
		pack.Sections = append(pack.Sections, rep)
		if !s.shown() {
			continue
		}
		if !first {
			b.WriteString(Separator)
		}
		first = false
		b.WriteString(s.text)
	}
	pack.Text = b.String()
	pack.Total = len(pack.Text)
	if pack.Total > in.Budget {
		// fit guarantees this cannot happen for budgets ≥ MinBudget.
		return nil, fmt.Errorf("build prompt: %d bytes exceed prompt.budget %d", pack.Total, in.Budget)
	}
	return pack, nil
}

func fixedText(key string, protect []string, spend string) string {
	if key == KeyContract {
		return runnerContract(protect, spend)
	}
	return outputContract
}

func (s *section) shown() bool { return s.state == StateIncluded || s.state == StateTruncated }

// render lays out a section: heading, blank line, body (fenced when the
// section is), and the truncation marker when cut.
func (s *section) render(heading, body string, truncated bool) string {
	var b strings.Builder
	b.WriteString(heading)
	b.WriteString("\n\n")
	if s.fence != "" {
		b.WriteString(s.fence + "text\n")
		if body != "" {
			b.WriteString(body + "\n")
		}
		b.WriteString(s.fence + "\n")
	} else if body != "" {
		b.WriteString(body + "\n")
	}
	if truncated {
		b.WriteString(TruncatedMarker + "\n")
	}
	return b.String()
}

// fit drops and truncates sections until the rendered total is within
// budget.
func fit(secs []*section, budget int) {
	total := func() int {
		n, count := 0, 0
		for _, s := range secs {
			if s.shown() {
				n += len(s.text)
				count++
			}
		}
		if count > 1 {
			n += (count - 1) * len(Separator)
		}
		return n
	}
	byKey := map[string]*section{}
	for _, s := range secs {
		byKey[s.def.key] = s
	}
	for _, key := range DropOrder {
		if total() <= budget {
			return
		}
		if s := byKey[key]; s.state == StateIncluded {
			s.state = StateDropped
		}
	}
	// Truncate variable sections from the last one before the Output
	// Contract backwards.
	for i := len(secs) - 1; i >= 0 && total() > budget; i-- {
		s := secs[i]
		if s.def.fixed || !s.shown() {
			continue
		}
		room := budget - (total() - len(s.text))
		s.truncate(room)
	}
}

// truncate cuts s so that its text takes at most room bytes, keeping as much
// of the body as fits. When even the heading does not fit, the section is
// reduced to its bare heading and the marker.
func (s *section) truncate(room int) {
	s.state = StateTruncated
	for _, heading := range []string{s.heading, "# " + s.def.name} {
		overhead := len(s.render(heading, "", true))
		if overhead > room {
			continue
		}
		keep := CutHead(s.body, room-overhead-1) // -1: the newline after the kept body
		s.text = s.render(heading, keep, true)
		return
	}
	s.text = minimalText(s.def)
}

// CutHead returns the longest prefix of s of at most n bytes that ends at a
// UTF-8 boundary, shortened to the last line break when one is near, with
// trailing white space removed.
func CutHead(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	if j := strings.LastIndexByte(s[:i], '\n'); j >= 0 && i-j <= min(i/4, 256) {
		i = j
	}
	return strings.TrimRight(s[:i], " \t\r\n")
}

// splitHeading separates a file's own first-level heading from its body.
// When the heading starts with the section's name (or an alias), it becomes
// the section heading with the name normalised, so "# History (previous
// attempt)" stays one heading and "# Questions" becomes "# Open Questions".
// Any other content keeps its first line and gets the plain "# Name".
func splitHeading(d sectionDef, content string) (heading, body string) {
	content = strings.TrimLeft(textfmt.NormalizeNewlines(content), "\n")
	heading = "# " + d.name
	first, rest, _ := strings.Cut(content, "\n")
	if title, ok := strings.CutPrefix(strings.TrimRight(first, " \t"), "# "); ok {
		for _, name := range append([]string{d.name}, d.aliases...) {
			if len(title) < len(name) || !strings.EqualFold(title[:len(name)], name) {
				continue
			}
			suffix := title[len(name):]
			if suffix != "" && !strings.HasPrefix(suffix, " ") && !strings.HasPrefix(suffix, ":") {
				continue // "# Goals" is not "# Goal"
			}
			if len(suffix) > maxHeadingSuffix {
				suffix = ""
			}
			return heading + suffix, strings.TrimRight(strings.TrimLeft(rest, "\n"), " \t\n")
		}
	}
	return heading, strings.TrimRight(content, " \t\n")
}

// maxHeadingSuffix bounds what a file's heading may add to a section
// heading; longer suffixes are dropped.
const maxHeadingSuffix = 80

// selectedText renders the Selected Node section: one field per line.
func selectedText(in Input, sc scanResult) string {
	n := in.Selected
	path := in.SelectedPath
	if path == "" && in.Index != nil {
		path = in.Index.Path(n.ID)
	}
	if path == "" {
		ids := make([]string, len(sc.path))
		for i, p := range sc.path {
			ids[i] = p.ID
		}
		path = strings.Join(ids, "/")
	}
	if path == "" {
		path = n.ID
	}
	var b strings.Builder
	textfmt.Field(&b, "path", path)
	textfmt.Field(&b, "id", n.ID)
	textfmt.Field(&b, "title", n.Title)
	textfmt.Field(&b, "goal", n.Goal)
	limit := n.AttemptLimit(in.DefaultMaxAttempts)
	if limit > 0 {
		fmt.Fprintf(&b, "attempt: %d of %d\n", n.Attempts+1, limit)
	} else {
		fmt.Fprintf(&b, "attempt: %d\n", n.Attempts+1)
	}
	if len(n.DependsOn) > 0 {
		deps := make([]string, len(n.DependsOn))
		for i, id := range n.DependsOn {
			status := "unknown"
			var dep *tree.Node
			if in.Index != nil {
				dep = in.Index.Node(id)
			} else {
				dep = sc.deps[id]
			}
			if dep != nil {
				status = string(dep.EffectiveStatus())
			}
			deps[i] = id + " (" + status + ")"
		}
		textfmt.Field(&b, "depends_on", strings.Join(deps, ", "))
	}
	textfmt.List(&b, "acceptance", n.Acceptance)
	if len(in.Judges) > 0 {
		textfmt.List(&b, "judged_by", judgeLines(in.Judges, n.ID))
	}
	if len(in.Removes) > 0 {
		b.WriteString("removes (tests this task may remove or rename; any other test that passes now must still run and pass):\n")
		for _, name := range in.Removes {
			b.WriteString("- " + textfmt.OneLine(name, 200) + "\n")
		}
	}
	return b.String()
}
