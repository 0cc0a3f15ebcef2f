package executor

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/strictjson"
	"github.com/runner-cli/runner/internal/tree"
)

// Message statuses an agent may report.
const (
	StatusDone       = "done"
	StatusRetry      = "retry"
	StatusBlocked    = "blocked"
	StatusDecomposed = "decomposed"
)

// Where a final message was found (Result.MessageSource).
const (
	SourceOutputFile  = "output_file"
	SourceResultEvent = "result_event"
	SourceStdout      = "stdout"
)

// Message is the agent's final message (SPEC §5).
type Message struct {
	Status      string       `json:"status"`
	Summary     string       `json:"summary"`
	Assumptions []string     `json:"assumptions,omitempty"`
	Questions   []string     `json:"questions,omitempty"`
	Children    []*tree.Node `json:"children,omitempty"`
}

// OutputSchema is the JSON Schema of the final message, written to
// .runner/state/output.schema.json and passed to `codex exec
// --output-schema`. It follows the rules of OpenAI strict structured
// output (see MessageSchema); ParseMessage accepts null for the optional
// fields. Each child can decompose further when it runs.
var OutputSchema = MessageSchema{
	Title:       "runner final message",
	Statuses:    []string{StatusDone, StatusRetry, StatusBlocked, StatusDecomposed},
	Status:      "done: the node's goal and acceptance are met; retry: progress was made but another attempt is needed; blocked: cannot go on without a human; decomposed: the node is split into children",
	Summary:     "What was done and what is left; for blocked, why",
	Assumptions: "Assumptions made that a human should know about",
	Questions:   "Open questions for a human",
	Children:    "Only with status decomposed: the sub-tasks, in execution order",
	Child:       "node",
}.JSON()

// messageMaxDepth bounds the nesting of a final message;
// nestedMaxDepth that of one whose children nest (ParseNestedMessage), as
// deep as a tree file may be.
const (
	messageMaxDepth = 32
	nestedMaxDepth  = tree.MaxJSONDepth
)

// wireMessage and wireChild are the accepted shape of a final message; a
// child has only the fields of the schema, so runner-owned fields (status,
// attempts) and nested children are refused as unknown. wireNode is a
// child of a message whose children nest (ParseNestedMessage).
type wireMessage = wireMessageOf[wireChild]

type wireMessageOf[C any] struct {
	Status      string   `json:"status"`
	Summary     string   `json:"summary"`
	Assumptions []string `json:"assumptions"`
	Questions   []string `json:"questions"`
	Children    []*C     `json:"children"`
}

type wireChild struct {
	ID         string   `json:"id"`
	Title      string   `json:"title"`
	Goal       string   `json:"goal"`
	Acceptance []string `json:"acceptance"`
	DependsOn  []string `json:"depends_on"`
}

type wireNode struct {
	ID         string       `json:"id"`
	Title      string       `json:"title"`
	Goal       string       `json:"goal"`
	Acceptance []string     `json:"acceptance"`
	DependsOn  []string     `json:"depends_on"`
	Checks     []*wireCheck `json:"checks"`
	Children   []*wireNode  `json:"children"`
}

// wireCheck is a check a plan proposes for a task (SPEC §18).
type wireCheck struct {
	Name   string `json:"name"`
	Run    string `json:"run"`
	Report string `json:"report"`
}

// ParseMessage parses and checks a final message strictly: one JSON object,
// no duplicate or unknown fields, status one of done, retry, blocked or
// decomposed, a non-blank summary, and children (id and title required)
// present and non-empty exactly when the status is decomposed. Optional
// fields may be null. Blank assumptions and questions are dropped. The
// children's ids and dependencies are checked by the tree when it adopts
// them, not here.
func ParseMessage(data []byte) (*Message, error) {
	var w wireMessage
	m, err := decodeMessage(data, &w, messageMaxDepth)
	if err != nil || m.Status != StatusDecomposed {
		return m, err
	}
	for i, c := range w.Children {
		switch {
		case c == nil:
			return nil, fmt.Errorf("final message: children[%d] is null", i)
		case strings.TrimSpace(c.ID) == "":
			return nil, fmt.Errorf("final message: children[%d] has no id", i)
		case strings.TrimSpace(c.Title) == "":
			return nil, fmt.Errorf("final message: children[%d] (%s) has no title", i, c.ID)
		}
		m.Children = append(m.Children, &tree.Node{
			ID: c.ID, Title: c.Title, Goal: c.Goal, Acceptance: c.Acceptance, DependsOn: c.DependsOn,
		})
	}
	return m, nil
}

// ParseNestedMessage is ParseMessage for a message whose children may
// have children of their own, to any depth a tree file allows: the plan
// `runner plan` asks for (SPEC §16). A null child anywhere is refused;
// the children's ids, titles and dependencies are left to the tree
// validation the plan goes through, which names every problem at once
// by the node's path.
func ParseNestedMessage(data []byte) (*Message, error) {
	var w wireMessageOf[wireNode]
	m, err := decodeMessage(data, &w, nestedMaxDepth)
	if err != nil || m.Status != StatusDecomposed {
		return m, err
	}
	var nulls []error
	m.Children = nestedNodes(w.Children, "children", &nulls)
	if len(nulls) > 0 {
		return nil, fmt.Errorf("final message: %w", errors.Join(nulls...))
	}
	return m, nil
}

// nestedNodes converts the children at path (children[2].children, say),
// noting each null one in nulls.
func nestedNodes(list []*wireNode, path string, nulls *[]error) []*tree.Node {
	var out []*tree.Node
	for i, c := range list {
		at := fmt.Sprintf("%s[%d]", path, i)
		if c == nil {
			*nulls = append(*nulls, fmt.Errorf("%s is null", at))
			continue
		}
		n := &tree.Node{
			ID: c.ID, Title: c.Title, Goal: c.Goal, Acceptance: c.Acceptance, DependsOn: c.DependsOn,
			Children: nestedNodes(c.Children, at+".children", nulls),
		}
		for k, ch := range c.Checks {
			if ch == nil {
				*nulls = append(*nulls, fmt.Errorf("%s.checks[%d] is null", at, k))
				continue
			}
			n.Checks = append(n.Checks, tree.Check{Name: ch.Name, Run: ch.Run, Report: ch.Report})
		}
		out = append(out, n)
	}
	return out
}

// decodeMessage decodes a final message into w, which bounds its
// nesting to depth, and checks what does not depend on the children's
// shape: the status, the summary, and children present exactly with
// status decomposed. The message returned has no children yet.
func decodeMessage[C any](data []byte, w *wireMessageOf[C], depth int) (*Message, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("final message is empty")
	}
	if trimmed[0] != '{' {
		return nil, errors.New("final message is not a JSON object")
	}
	if err := strictjson.Decode(trimmed, w, depth); err != nil {
		return nil, fmt.Errorf("final message: %v", err)
	}
	switch w.Status {
	case StatusDone, StatusRetry, StatusBlocked, StatusDecomposed:
	case "":
		return nil, errors.New(`final message: "status" is missing; want done, retry, blocked or decomposed`)
	default:
		return nil, fmt.Errorf("final message: status %q is not one of done, retry, blocked, decomposed", w.Status)
	}
	if strings.TrimSpace(w.Summary) == "" {
		return nil, errors.New(`final message: "summary" is missing or blank`)
	}
	m := &Message{
		Status:      w.Status,
		Summary:     w.Summary,
		Assumptions: nonBlank(w.Assumptions),
		Questions:   nonBlank(w.Questions),
	}
	if w.Status != StatusDecomposed {
		if len(w.Children) > 0 {
			return nil, fmt.Errorf("final message: children are only allowed with status decomposed, not %s", w.Status)
		}
		return m, nil
	}
	if len(w.Children) == 0 {
		return nil, errors.New("final message: status decomposed needs at least one child")
	}
	return m, nil
}

func nonBlank(in []string) []string {
	var out []string
	for _, s := range in {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// FindMessage looks for the final message where SPEC §5 says, first match
// wins: the output file if it is not empty (its whole content, or else the
// last JSON object inside it); the result text of a Claude result event or
// JSON envelope in stdout (the last JSON object inside that text); the
// last top-level JSON object in stdout that is not an agent event (see
// isAgentEvent), text around it ignored. stdoutTail is the end of the
// agent's stdout. It returns the message and where it was found, or an
// error saying why there is no valid one; a source that exists but holds
// an invalid message is reported, not skipped.
func FindMessage(outputFile []byte, stdoutTail []byte) (*Message, string, error) {
	f := findMessage(outputFile, stdoutTail)
	return f.message(), f.source, f.err
}

// stdoutView is what the message lookup knows of the agent's stdout: its
// end, and what the event stream read from all of it.
type stdoutView struct {
	tail      []byte
	tailStart int64        // offset of tail[0] in stdout
	stream    *eventStream // nil: only the tail is known
}

type found struct {
	answer any // *Message, or *Verdict for a review; nil when none is valid
	source string
	err    error
	claude *claudeResult // the Claude result event, when stdout had one
	none   bool          // no source held anything to read as a message
}

// message is the answer found as an agent's final message.
func (f found) message() *Message {
	m, _ := f.answer.(*Message)
	return m
}

// verdict is the answer found as a reviewer's verdict.
func (f found) verdict() *Verdict {
	v, _ := f.answer.(*Verdict)
	return v
}

// parser parses and checks a final message of one kind: ParseMessage,
// ParseNestedMessage (Options.NestedChildren), or ParseVerdict for a
// review.
type parser func([]byte) (any, error)

func parseTaskMessage(data []byte) (any, error) {
	m, err := ParseMessage(data)
	if err != nil {
		return nil, err
	}
	return m, nil
}

func parseNestedMessage(data []byte) (any, error) {
	m, err := ParseNestedMessage(data)
	if err != nil {
		return nil, err
	}
	return m, nil
}

func findMessage(outputFile, stdoutTail []byte) found {
	return lookupMessage(outputFile, stdoutView{tail: stdoutTail}, parseTaskMessage)
}

// lookupMessage finds the final message where SPEC §5 says (see
// FindMessage) and parses it with parse.
func lookupMessage(outputFile []byte, out stdoutView, parse parser) found {
	spans := topLevelObjects(out.tail)
	var f found
	f.claude = claudeResultOf(out, spans)

	if len(bytes.TrimSpace(outputFile)) > 0 {
		f.source = SourceOutputFile
		f.answer, f.err = parseLenient(outputFile, parse)
		if f.err != nil {
			f.err = fmt.Errorf("output file: %w", f.err)
		}
		return f
	}
	if c := f.claude; c != nil {
		f.source = SourceResultEvent
		if c.Result == nil {
			f.err = fmt.Errorf("the claude result event (subtype %q) has no result text", c.Subtype)
			return f
		}
		text := []byte(*c.Result)
		obj := lastObject(text)
		if obj == nil {
			f.err = fmt.Errorf("the claude result text holds no JSON object: %s", excerpt(text, 200))
			return f
		}
		f.answer, f.err = parse(obj)
		if f.err != nil {
			f.err = fmt.Errorf("claude result text: %w", f.err)
		}
		return f
	}
	var candidate []byte
	events := 0
	for i := len(spans) - 1; i >= 0 && candidate == nil; i-- {
		if obj := out.tail[spans[i][0]:spans[i][1]]; isAgentEvent(obj) {
			events++
		} else {
			candidate = obj
		}
	}
	if candidate == nil {
		f.none = true
		f.err = errors.New("no output file was written and stdout holds no JSON object")
		if events > 0 {
			f.err = errors.New("no output file was written and stdout holds no JSON object besides the agent's events")
		}
		return f
	}
	f.source = SourceStdout
	f.answer, f.err = parse(candidate)
	if f.err != nil {
		f.err = fmt.Errorf("last JSON object in stdout: %w", f.err)
	}
	return f
}

// isAgentEvent reports whether a JSON object is an event of the agent's
// stream rather than a final message: it has a "type" string and no
// "status" (Codex and Claude events all have a "type"; a final message has
// a "status" and no "type").
func isAgentEvent(obj []byte) bool {
	var ev claudeEvent
	return readEvent(obj, &ev) && len(ev.Type) > 0 && ev.Type.Kind() == '"' && len(ev.Status) == 0
}

// parseLenient parses a whole text as a message; when the text is not
// just one JSON object, it uses the last JSON object inside it.
func parseLenient(data []byte, parse parser) (any, error) {
	m, err := parse(data)
	if err == nil {
		return m, nil
	}
	trimmed := bytes.TrimSpace(data)
	obj := lastObject(trimmed)
	switch {
	case obj == nil && trimmed[0] != '{':
		return nil, fmt.Errorf("holds no JSON object: %s", excerpt(trimmed, 200))
	case obj == nil || len(obj) == len(trimmed):
		return nil, err // the text is one (broken or invalid) object: its own error says most
	}
	return parse(obj)
}

// excerpt returns the start of data on one line, for error messages.
func excerpt(data []byte, n int) string {
	s := strings.Join(strings.Fields(string(bytes.TrimSpace(data))), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return fmt.Sprintf("%q", s)
}
