package tree

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/fsutil"
)

// Marshal renders t canonically: keys in the order of the Tree and Node
// struct fields, empty optional fields left out, 2-space indent, no HTML
// escaping, and a trailing newline. Equal trees give equal bytes, and the
// bytes are those encoding/json produces for the same structs with
// SetEscapeHTML(false) and SetIndent("", "  "). The walk is iterative, so
// depth does not matter. Marshal panics if t's nodes form a pointer cycle,
// which Validate rejects.
func Marshal(t *Tree) []byte {
	b := make([]byte, 0, sizeHint(t.Root))
	b = append(b, "{\n  \"version\": "...)
	b = strconv.AppendInt(b, int64(t.Version), 10)
	b = append(b, ",\n  \"root\": "...)
	if t.Root == nil {
		b = append(b, "null"...)
	} else {
		b = appendNode(b, t.Root)
	}
	return append(b, "\n}\n"...)
}

// cycleGuard is a depth no real tree reaches (Validate allows
// MaxNodeDepth); passing it means a node is its own descendant.
const cycleGuard = 1 << 20

// sizeHint estimates the canonical size of the tree below root, slightly
// generously, so that Marshal rarely has to grow its buffer.
func sizeHint(root *Node) int {
	size := 64
	if root == nil {
		return size
	}
	type item struct {
		n     *Node
		level int
	}
	stack := []item{{root, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := it.n
		if it.level > cycleGuard {
			panic("tree: marshal: the nodes form a pointer cycle")
		}
		line := 4*it.level + 24 // member indent, key, quotes and separators
		size += 2*line + len(n.ID) + len(n.Title)
		if n.Goal != "" {
			size += line + len(n.Goal)
		}
		for _, list := range [4][]string{n.Acceptance, n.DependsOn, n.Removes, n.Executors} {
			if len(list) > 0 {
				size += 2 * line
				for _, s := range list {
					size += line + len(s)
				}
			}
		}
		for _, c := range n.Checks {
			size += 7*line + len(c.Name) + len(c.Run) + len(c.Timeout) + len(c.OutputLimit) + len(c.Report)
		}
		size += 6 * line // max_attempts, max_cost_usd, max_tokens, status, attempts, blocked_reason
		size += len(n.BlockedReason)
		if len(n.Children) > 0 {
			size += 2 * line
		}
		for _, ch := range n.Children {
			if ch != nil {
				stack = append(stack, item{ch, it.level + 1})
			}
		}
	}
	return size + size/16
}

// appendNode writes the object for root, which starts at indent 2 (the
// "root" member), and everything below it.
func appendNode(b []byte, root *Node) []byte {
	type item struct {
		n      *Node // a node to write
		indent int   // of the node's braces
		first  bool  // the node is the first in its children list
		close  bool  // instead: end the children list of a node at indent
	}
	stack := []item{{n: root, indent: 2}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := it.n
		if it.close {
			b = appendIndent(b, it.indent+2)
			b = append(b, ']')
			b = appendIndent(b, it.indent)
			b = append(b, '}')
			continue
		}
		if it.indent > 2 { // a child, not the root
			if !it.first {
				b = append(b, ',')
			}
			b = appendIndent(b, it.indent)
		}
		if n == nil {
			b = append(b, "null"...)
			continue
		}
		in := it.indent + 2 // indent of the node's members
		b = append(b, '{')
		b = appendKey(b, in, "id", false)
		b = appendString(b, n.ID)
		b = appendKey(b, in, "title", true)
		b = appendString(b, n.Title)
		if n.Goal != "" {
			b = appendKey(b, in, "goal", true)
			b = appendString(b, n.Goal)
		}
		if len(n.Acceptance) > 0 {
			b = appendKey(b, in, "acceptance", true)
			b = appendStrings(b, in, n.Acceptance)
		}
		if len(n.Checks) > 0 {
			b = appendKey(b, in, "checks", true)
			b = appendChecks(b, in, n.Checks)
		}
		if len(n.Removes) > 0 {
			b = appendKey(b, in, "removes", true)
			b = appendStrings(b, in, n.Removes)
		}
		if len(n.DependsOn) > 0 {
			b = appendKey(b, in, "depends_on", true)
			b = appendStrings(b, in, n.DependsOn)
		}
		if n.MaxAttempts != nil {
			b = appendKey(b, in, "max_attempts", true)
			b = strconv.AppendInt(b, int64(*n.MaxAttempts), 10)
		}
		b = appendSpendFields(b, in, n)
		if n.Status != "" {
			b = appendKey(b, in, "status", true)
			b = appendString(b, string(n.Status))
		}
		if n.Attempts != 0 {
			b = appendKey(b, in, "attempts", true)
			b = strconv.AppendInt(b, int64(n.Attempts), 10)
		}
		if n.BlockedReason != "" {
			b = appendKey(b, in, "blocked_reason", true)
			b = appendString(b, n.BlockedReason)
		}
		if len(n.Children) == 0 {
			b = appendIndent(b, it.indent)
			b = append(b, '}')
			continue
		}
		b = appendKey(b, in, "children", true)
		b = append(b, '[')
		stack = append(stack, item{indent: it.indent, close: true})
		for k := len(n.Children) - 1; k >= 0; k-- {
			stack = append(stack, item{n: n.Children[k], indent: in + 2, first: k == 0})
		}
	}
	return b
}

// newlineSpaces is a newline followed by enough spaces for most indents.
var newlineSpaces = "\n" + strings.Repeat(" ", 256)

// appendIndent starts a new line indented by indent spaces.
func appendIndent(b []byte, indent int) []byte {
	if indent < len(newlineSpaces) {
		return append(b, newlineSpaces[:1+indent]...)
	}
	b = append(b, newlineSpaces...)
	for range indent - (len(newlineSpaces) - 1) {
		b = append(b, ' ')
	}
	return b
}

func appendKey(b []byte, indent int, key string, comma bool) []byte {
	if comma {
		b = append(b, ',')
	}
	b = appendIndent(b, indent)
	b = append(b, '"')
	b = append(b, key...)
	return append(b, "\": "...)
}

func appendStrings(b []byte, indent int, list []string) []byte {
	b = append(b, '[')
	for k, s := range list {
		if k > 0 {
			b = append(b, ',')
		}
		b = appendIndent(b, indent+2)
		b = appendString(b, s)
	}
	b = appendIndent(b, indent)
	return append(b, ']')
}

// appendChecks writes a node's checks, each object's keys in the order
// of the Check struct's fields, empty optional ones left out.
func appendChecks(b []byte, indent int, list []Check) []byte {
	b = append(b, '[')
	for k, c := range list {
		if k > 0 {
			b = append(b, ',')
		}
		b = appendIndent(b, indent+2)
		b = append(b, '{')
		in := indent + 4
		b = appendKey(b, in, "name", false)
		b = appendString(b, c.Name)
		b = appendKey(b, in, "run", true)
		b = appendString(b, c.Run)
		for _, f := range [...]struct{ key, val string }{{"timeout", c.Timeout}, {"output_limit", c.OutputLimit}, {"report", c.Report}} {
			if f.val != "" {
				b = appendKey(b, in, f.key, true)
				b = appendString(b, f.val)
			}
		}
		b = appendIndent(b, indent+2)
		b = append(b, '}')
	}
	b = appendIndent(b, indent)
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// plainByte marks the ASCII bytes a JSON string holds as they are.
var plainByte = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString quotes s as encoding/json does without HTML escaping:
// '"', '\\' and control characters escaped, invalid UTF-8 replaced by
// \ufffd, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainByte[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Save validates t and writes it canonically to path, atomically and
// durably, with mode 0644. An invalid tree is never written.
func Save(path string, t *Tree) error {
	_, err := SaveData(path, t)
	return err
}

// SaveData is Save, also returning the bytes written.
func SaveData(path string, t *Tree) ([]byte, error) {
	data, rep, err := PrepareSave(path, t)
	if err != nil {
		return nil, err
	}
	return data, rep.Commit(fsutil.Durable)
}

// PrepareSave does what Save does up to giving the file its name: it
// validates t and writes its canonical form to a temporary file, fsynced
// (fsutil.PrepareReplace). It returns the bytes and the replacement to
// commit.
func PrepareSave(path string, t *Tree) ([]byte, *fsutil.Replacement, error) {
	if err := t.Validate(""); err != nil {
		return nil, nil, fmt.Errorf("save %s: refusing to write an invalid tree:\n%w", path, err)
	}
	data := Marshal(t)
	rep, err := fsutil.PrepareReplace(path, data, 0o644)
	return data, rep, err
}
