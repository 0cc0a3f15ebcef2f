// Package review is the review of an iteration (SPEC §17): a fresh
// session of another executor that judges work whose agent says done and
// whose guards passed, before it is recorded done. Ask holds the work,
// asks the reviewer until it gives a verdict, puts back whatever it
// changed, and makes the verdict durable through the ledger; Wanted,
// Verdict, NoteRejection and AfterRejection are what the coordinator
// (package loop) decides with it.
//
// The prompt (Build, which reads and writes no file) holds a fixed review
// contract, the task (path, goal, acceptance), the agent's summary
// (quoted, so that none of its lines reads as a section of the prompt),
// the guard results and the attempt's changes (fenced), then the verdict
// format; every dynamic section is scrubbed of secrets, and the whole
// fits a byte budget by cutting the variable sections from the last (the
// changes) backwards.
//
// It owns the review's folder of the run folder and the refs under
// refs/runner/reviews/ and refs/runner/review-changes/. It must not touch
// the tree, the outcome or the run branch but to put back what a reviewer
// moved.
package review

import (
	"fmt"
	"strings"

	"github.com/runner-cli/runner/internal/prompt"
	"github.com/runner-cli/runner/internal/textfmt"
)

// Input is what a review prompt is built from.
type Input struct {
	// The task: its path in the tree, id, title, goal and acceptance.
	Path, ID, Title, Goal string
	Acceptance            []string
	// Summary is the agent's summary of its work.
	Summary string
	// Guards are the guards' results, one line each ("test: pass, exit
	// 0, 2.1s"); none when no guard is configured.
	Guards []string
	// Changes are the attempt's changes: a diff against the last
	// checkpoint, or without git the files it changed; ChangesNote says
	// which (one line, shown above them).
	Changes, ChangesNote string
	Budget               int
	Redactor             prompt.Redactor
}

// Section keys, in prompt order.
const (
	KeyContract = "review_contract"
	KeyTask     = "task"
	KeySummary  = "summary"
	KeyGuards   = "guards"
	KeyChanges  = "changes"
	KeyOutput   = "output"
)

type section struct {
	key, name, source string
	fixed, fenced     bool
	quoted            bool // the agent's own words: every line after "> "
	body              string
	state             string
	text              string
}

// MinBudget is the smallest budget Build accepts: the two fixed
// bookends, each other section's heading with the truncation marker, and
// the separators.
func MinBudget() int {
	n := len(contract) + len(output) + 5*len(prompt.Separator)
	for _, name := range []string{"Task", "Agent's Summary", "Guard Results", "Changes"} {
		n += len(minimal(name))
	}
	return n
}

func minimal(name string) string { return "# " + name + "\n\n" + prompt.TruncatedMarker + "\n" }

// Build assembles the review prompt within in.Budget. Sections without
// content are left out; over budget, the changes are cut first, then the
// guard results, the summary and the task, each at a UTF-8 boundary (a
// line's end when one is near) and ending with [truncated].
func Build(in Input) (*prompt.Pack, error) {
	if in.Budget < MinBudget() {
		return nil, fmt.Errorf("build the review prompt: prompt.budget is %d bytes, but the review's fixed sections need at least %d; raise prompt.budget in .runner/config.toml", in.Budget, MinBudget())
	}
	changes := strings.TrimSpace(in.Changes)
	if changes != "" && in.ChangesNote != "" {
		changes = in.ChangesNote + "\n\n" + changes
	} else if changes == "" {
		changes = in.ChangesNote
	}
	secs := []*section{
		{key: KeyContract, name: "Review Contract", source: "builtin", fixed: true, text: contract},
		{key: KeyTask, name: "Task", source: "tree.json", body: taskText(in)},
		{key: KeySummary, name: "Agent's Summary", source: "meta.json", body: in.Summary, quoted: true},
		{key: KeyGuards, name: "Guard Results", source: "meta.json", body: guardText(in.Guards)},
		{key: KeyChanges, name: "Changes", source: "git diff", body: changes, fenced: true},
		{key: KeyOutput, name: "Output Contract", source: "builtin", fixed: true, text: output},
	}
	pack := &prompt.Pack{Budget: in.Budget, Redactions: map[string]int{}}
	for _, s := range secs {
		if s.fixed {
			s.state = prompt.StateIncluded
			continue
		}
		body := strings.TrimSpace(textfmt.NormalizeNewlines(s.body))
		if in.Redactor != nil && body != "" {
			var counts map[string]int
			body, counts = in.Redactor.Redact(body)
			for rule, c := range counts {
				pack.Redactions[rule] += c
			}
		}
		switch {
		case s.quoted:
			body = prompt.Quote(body)
		case !s.fenced:
			body = prompt.Defuse(body)
		}
		s.body = body
		if body == "" {
			s.state = prompt.StateEmpty
			continue
		}
		s.state, s.text = prompt.StateIncluded, s.render(body, false)
	}
	fit(secs, in.Budget)
	var b strings.Builder
	for _, s := range secs {
		rep := prompt.SectionReport{Name: s.name, Key: s.key, Source: s.source, State: s.state}
		if s.state == prompt.StateEmpty {
			pack.Sections = append(pack.Sections, rep)
			continue
		}
		rep.Bytes, rep.Tokens = len(s.text), prompt.Tokens(len(s.text))
		pack.Sections = append(pack.Sections, rep)
		if b.Len() > 0 {
			b.WriteString(prompt.Separator)
		}
		b.WriteString(s.text)
	}
	pack.Text, pack.Total = b.String(), b.Len()
	if pack.Total > in.Budget {
		return nil, fmt.Errorf("build the review prompt: %d bytes exceed prompt.budget %d", pack.Total, in.Budget)
	}
	return pack, nil
}

func (s *section) render(body string, truncated bool) string {
	var b strings.Builder
	b.WriteString("# " + s.name + "\n\n")
	fence := ""
	if s.fenced {
		fence = prompt.Fence(body)
		b.WriteString(fence + "text\n")
	}
	if body != "" {
		b.WriteString(body + "\n")
	}
	if fence != "" {
		b.WriteString(fence + "\n")
	}
	if truncated {
		b.WriteString(prompt.TruncatedMarker + "\n")
	}
	return b.String()
}

// fit cuts the variable sections, from the last one backwards, until the
// prompt is within budget.
func fit(secs []*section, budget int) {
	total := func() int {
		n, count := 0, 0
		for _, s := range secs {
			if s.state != prompt.StateEmpty {
				n += len(s.text)
				count++
			}
		}
		return n + max(count-1, 0)*len(prompt.Separator)
	}
	for i := len(secs) - 1; i >= 0 && total() > budget; i-- {
		s := secs[i]
		if s.fixed || s.state == prompt.StateEmpty {
			continue
		}
		room := budget - (total() - len(s.text))
		s.state = prompt.StateTruncated
		overhead := len(s.render("", true))
		if s.fenced {
			overhead += 2 * (len(prompt.Fence(s.body)) - 3) // a longer fence than the empty body's
		}
		if overhead+1 > room {
			s.text = minimal(s.name)
			continue
		}
		s.text = s.render(prompt.CutHead(s.body, room-overhead-1), true)
	}
}

func taskText(in Input) string {
	var b strings.Builder
	textfmt.Field(&b, "path", in.Path)
	textfmt.Field(&b, "id", in.ID)
	textfmt.Task(&b, in.Title, in.Goal, in.Acceptance)
	return b.String()
}

func guardText(guards []string) string {
	if len(guards) == 0 {
		return "No guard commands are configured: nothing but you checks this work."
	}
	var b strings.Builder
	for _, g := range guards {
		b.WriteString("- " + g + "\n")
	}
	return b.String()
}
