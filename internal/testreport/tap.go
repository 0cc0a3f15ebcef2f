package testreport

import (
	"bytes"
	"io"
	"strconv"
	"strings"
)

// Messages of the tests a TAP plan names that never came.
const (
	MissingFromTAP = "missing from the TAP output"
	BailOutPrefix  = "bail out: " // followed by the Bail out!'s reason
	// BailOutUnit is the Broken unit of a Bail out!.
	BailOutUnit = "Bail out!"
)

// maxMissing bounds the planned tests reported one by one as missing;
// the rest are one test, "tests K..N".
const maxMissing = 1000

// maxDepth bounds the nesting of subtests read: a line indented by more
// than 4*maxDepth spaces is not read as TAP.
const maxDepth = 32

// tapItem is a test line read and not yet in the report: the last one
// read (whose YAML block or diagnostics may follow) and the subtests
// waiting for their parent's line.
type tapItem struct {
	name   string
	status string
	msg    *head // a failure's diagnostics
}

// tap is the state of a TAP stream being read.
type tap struct {
	rep *Report
	// levels[d] holds the items read at nesting depth d (indentation/4)
	// and not yet passed on: depth 0 to the report, depth d to the parent
	// line at depth d-1 that closes them.
	levels  [][]tapItem
	counts  []int    // test lines read at each depth, for "test N"
	subtest []string // "# Subtest: NAME" seen for each depth
	seen    map[int]bool
	plan    int
	// The last test line read, until a line that is not its YAML block
	// or its "#" diagnostics: its indentation, the head of its message
	// (nil unless it failed), the indentation of its YAML block's "---"
	// (-1 outside one), and whether the line before was the test line.
	inTest   bool
	indent   int
	msg      *head
	yaml     int
	fresh    bool
	tapLine  bool // a TAP line was read
	nonBlank int  // lines that are not blank
	bailed   bool
	reason   string
}

// ParseTAP reads a TAP (13 or 14) stream, streaming. A test is named by
// its description ("test N" without one); a name seen again is the same
// test, judged by its worst result (Report). A "# SKIP" or "# TODO"
// directive makes the test a skip, even a "not ok" (a TODO test's
// failure is not one). A YAML block or "#" diagnostics following a "not
// ok" line are its message. Indented subtests (TAP 14, node --test) are
// named "parent/child" after the parent's line that follows them. At the
// end, the tests the plan ("1..N") names that never came fail with
// MissingFromTAP. A "Bail out!" is a Broken unit named "Bail out!", its
// message BailOutPrefix and its reason; what follows it is not read as
// TAP, and the planned tests it left out are not tests of the report.
// Without a plan, nothing is missing. Lines that are not TAP are
// skipped.
func ParseTAP(r io.Reader) (*Report, error) {
	p := &tap{rep: &Report{}, seen: map[int]bool{}, plan: -1, yaml: -1}
	l := newLines(r)
	err := l.each(func(line []byte) {
		if !p.bailed {
			p.line(line)
		}
	})
	if err != nil {
		return nil, err
	}
	p.end()
	switch {
	case !p.rep.empty():
		return p.rep, nil
	case !p.tapLine && p.nonBlank > 0:
		return nil, malformed("no TAP test line in the report's %d lines", l.n)
	}
	return nil, errNoTests
}

func (p *tap) line(line []byte) {
	indent := 0
	for indent < len(line) && line[indent] == ' ' {
		indent++
	}
	text := bytes.TrimRight(line[indent:], " \t")
	if len(text) > 0 {
		p.nonBlank++
	}
	if p.inTest && p.diagnostic(line, indent, text) {
		return
	}
	depth := indent / 4
	if depth > maxDepth {
		return
	}
	switch {
	case isTestLine(text):
		p.tapLine = true
		p.test(depth, indent, string(text))
	case bytes.HasPrefix(text, []byte("# Subtest:")):
		p.grow(depth + 1)
		p.subtest[depth+1] = strings.TrimSpace(string(text[len("# Subtest:"):]))
	case depth == 0 && bytes.HasPrefix(text, []byte("1..")):
		if n, ok := planCount(text); ok {
			p.tapLine = true
			if p.plan < 0 {
				p.plan = n
			}
		}
	case len(text) >= 9 && strings.EqualFold(string(text[:9]), "bail out!"):
		p.tapLine = true
		p.bailed = true
		p.reason = strings.TrimSpace(string(text[9:]))
	}
}

// diagnostic takes line as part of the last test line's YAML block or
// "#" diagnostics, if it is one; it ends the test line's own part
// otherwise.
func (p *tap) diagnostic(line []byte, indent int, text []byte) bool {
	fresh := p.fresh
	p.fresh = false
	switch {
	case p.yaml >= 0 && bytes.Equal(text, []byte("...")) && indent > p.indent:
		p.yaml = -1
		return true
	case p.yaml >= 0 && (len(text) == 0 || indent >= p.yaml):
		if len(line) > p.yaml {
			p.msg.addBytes(line[p.yaml:])
		}
		p.msg.add("\n")
		return true
	case p.yaml >= 0:
		p.yaml = -1 // a block never closed
	case fresh && bytes.Equal(text, []byte("---")) && indent > p.indent:
		p.yaml = indent
		return true
	case len(text) == 0:
		p.fresh = fresh
		return true
	case indent == p.indent && text[0] == '#' && !bytes.HasPrefix(text, []byte("# Subtest:")):
		p.msg.addBytes(bytes.TrimPrefix(text[1:], []byte(" ")))
		p.msg.add("\n")
		return true
	}
	p.inTest = false
	return false
}

// isTestLine reports whether text (unindented) is "ok ..." or "not ok ...".
func isTestLine(t []byte) bool {
	t = bytes.TrimPrefix(t, []byte("not "))
	return bytes.HasPrefix(t, []byte("ok")) && (len(t) == 2 || t[2] == ' ' || t[2] == '\t')
}

// planCount reads "1..N" with an optional "# reason" after it.
func planCount(t []byte) (int, bool) {
	s := string(t[3:])
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	return n, err == nil && n >= 0
}

// test reads a test line at depth.
func (p *tap) test(depth, indent int, text string) {
	status := Pass
	if strings.HasPrefix(text, "not ") {
		status = Fail
		text = text[len("not "):]
	}
	text = strings.TrimLeft(text[2:], " \t")
	num := -1
	if i := strings.IndexFunc(text, func(r rune) bool { return r < '0' || r > '9' }); i != 0 {
		if i < 0 {
			i = len(text)
		}
		if n, err := strconv.Atoi(text[:i]); err == nil {
			num = n
		}
		text = text[i:]
	}
	desc, directive := splitDirective(text)
	desc = strings.TrimSpace(desc)
	if strings.HasPrefix(desc, "- ") || desc == "-" {
		desc = strings.TrimSpace(desc[1:])
	}
	d := strings.ToLower(directive)
	if strings.HasPrefix(d, "skip") || strings.HasPrefix(d, "todo") {
		status = Skip
	}

	p.grow(depth + 1)
	p.counts[depth]++
	if num < 0 {
		num = p.counts[depth]
	}
	if depth == 0 {
		p.seen[num] = true
		p.flush()
	}
	if desc == "" {
		desc = "test " + strconv.Itoa(num)
	}
	item := tapItem{name: desc, status: status}
	if status == Fail {
		item.msg = &head{}
	}
	// The subtests waiting at depth+1 are this test's; any deeper were
	// left without a parent line.
	for d := len(p.levels) - 1; d > depth; d-- {
		prefix := p.subtest[d]
		if d == depth+1 {
			prefix = desc
		}
		p.fold(d, prefix)
	}
	p.levels[depth] = append(p.levels[depth], item)
	p.inTest, p.indent, p.msg, p.yaml, p.fresh = true, indent, item.msg, -1, true
}

// fold moves the items at depth d (d > 0) to depth d-1, their names
// under prefix unless it is "".
func (p *tap) fold(d int, prefix string) {
	for _, c := range p.levels[d] {
		if prefix != "" {
			c.name = prefix + "/" + c.name
		}
		p.levels[d-1] = append(p.levels[d-1], c)
	}
	p.levels[d] = p.levels[d][:0]
	p.counts[d] = 0
	p.subtest[d] = ""
}

// splitDirective splits a test line's rest at its first "#" not escaped
// as "\#", unescaping the description.
func splitDirective(s string) (desc, directive string) {
	if !strings.Contains(s, "\\") {
		if i := strings.IndexByte(s, '#'); i >= 0 {
			return s[:i], strings.TrimSpace(s[i+1:])
		}
		return s, ""
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && (s[i+1] == '#' || s[i+1] == '\\'):
			i++
			b.WriteByte(s[i])
		case s[i] == '#':
			return b.String(), strings.TrimSpace(s[i+1:])
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), ""
}

// grow makes room for depth n.
func (p *tap) grow(n int) {
	for len(p.levels) <= n {
		p.levels = append(p.levels, nil)
		p.counts = append(p.counts, 0)
		p.subtest = append(p.subtest, "")
	}
}

// flush passes the items at depth 0 on to the report.
func (p *tap) flush() {
	if len(p.levels) == 0 {
		return
	}
	for _, it := range p.levels[0] {
		p.add(it.name, it.status, it.msg.String())
	}
	p.levels[0] = p.levels[0][:0]
}

// add adds a test to the report.
func (p *tap) add(name, status, msg string) {
	p.rep.Add(Test{Name: validUTF8(name), Status: status, Message: msg})
}

// end passes on what is left at the end of the stream: subtests whose
// parent line never came (named after their "# Subtest:" when there was
// one), then the planned tests that are missing.
func (p *tap) end() {
	for d := len(p.levels) - 1; d > 0; d-- {
		p.fold(d, p.subtest[d])
	}
	p.flush()
	if p.bailed {
		p.rep.AddBroken(Broken{Unit: BailOutUnit, Reason: BailedOut, Message: BailOutPrefix + p.reason})
		return
	}
	for n, missing := 1, 0; n <= p.plan; n++ {
		if p.seen[n] {
			continue
		}
		if missing == maxMissing {
			p.add("tests "+strconv.Itoa(n)+".."+strconv.Itoa(p.plan), Fail, MissingFromTAP)
			break
		}
		missing++
		p.add("test "+strconv.Itoa(n), Fail, MissingFromTAP)
	}
}
