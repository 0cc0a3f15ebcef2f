package testreport

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
)

// ParseJUnit reads one JUnit XML document, streaming (token by token,
// keeping only the test cases' names, statuses and bounded messages;
// encoding/xml still holds one text node whole while reading it, and
// reads no external entity). <testsuites> and <testsuite> nest to any
// depth; each <testcase> is a test named "classname.name", or
// "suite.name" after its nearest named <testsuite> when it has no
// classname, or just name when there is neither or when classname equals
// name (jest-junit writes both the same); the class alone without a
// name, "testcase N" without either. A <failure> or <error> child makes it a failure, its
// message the attribute message, a newline, then the element's text; a
// <skipped> child a skip. Two things are Broken units, not tests: a test
// case whose <error> says "collection failure" (pytest's report of a
// module it could not collect), named "classname.name" or name alone
// (pytest gives the module as name), and an
// <error> or <failure> of a <testsuite> outside any test case, named
// after the nearest named suite ("testsuite" without one).
func ParseJUnit(r io.Reader) (*Report, error) {
	rep := &Report{}
	if _, err := parseJUnit(rep, r); err != nil {
		return nil, err
	}
	if rep.empty() {
		return nil, errNoTests
	}
	return rep, nil
}

// ReadJUnit reads every file that f.Path matches (a glob as path.Match
// reads it, relative to workDir; "**" is not supported) and merges them
// in file name order into one report, under Report's rules for a name
// seen twice. Files are found and read inside workDir only: a link that
// leads out of it is not followed. No file matching is an error naming
// the pattern that wraps both ErrNoReport and ErrMalformed; a file that
// is not XML, or files without a test case between them, an error
// wrapping ErrMalformed.
func ReadJUnit(f Format, workDir string) (*Report, error) {
	if f.Path == "" {
		return nil, fmt.Errorf("testreport: report %q has no path", f.String())
	}
	root, err := os.OpenRoot(workDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	matches, err := fs.Glob(root.FS(), path.Clean(f.Path))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, f.String(), err)
	}
	sort.Strings(matches)
	rep := &Report{}
	files := 0
	for _, name := range matches {
		if fi, err := root.Stat(name); err != nil || fi.IsDir() {
			continue
		}
		files++
		if err := readJUnitFile(rep, root, name); err != nil {
			return nil, err
		}
	}
	switch {
	case files == 0:
		return nil, noFileError(f.Path)
	case rep.empty():
		return nil, malformed("no tests in the files matching %s", f.Path)
	}
	return rep, nil
}

// noFileError is ReadJUnit's error when no file matches the pattern.
type noFileError string

func (e noFileError) Error() string {
	return "no report file matches " + strconv.Quote(string(e))
}

func (e noFileError) Is(target error) bool {
	return target == ErrNoReport || target == ErrMalformed
}

func readJUnitFile(rep *Report, root *os.Root, name string) error {
	file, err := root.Open(name)
	if err != nil {
		return err
	}
	defer file.Close()
	if _, err := parseJUnit(rep, file); err != nil {
		if errors.Is(err, ErrMalformed) {
			return fmt.Errorf("%s: %w", name, err)
		}
		return err
	}
	return nil
}

// readErr remembers the error of the reader under the XML decoder, to
// tell it from the decoder's own.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(b []byte) (int, error) {
	n, err := e.r.Read(b)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// junitCase is the test case being read.
type junitCase struct {
	name      string
	status    string
	msg       *head
	depth     int    // its element's depth
	collected bool   // false: an <error> says it could not be collected
	unit      string // its name as a broken unit, then: no suite's name added
}

// collectionFailure is the message of pytest's <error> for a module it
// could not collect.
const collectionFailure = "collection failure"

// parseJUnit adds the test cases of the document in r to rep; it returns
// the number read.
func parseJUnit(rep *Report, r io.Reader) (int, error) {
	src := &readErr{r: r}
	d := xml.NewDecoder(bufio.NewReaderSize(src, 64<<10))
	d.CharsetReader = charsetReader
	d.Entity = xml.HTMLEntity
	var (
		suites []string // names of the enclosing <testsuite>s, by depth
		tc     *junitCase
		text   bool // the failure's or error's text is being read
		depth  int
		root   bool
		cases  int
		// outside is an <error> or <failure> of a suite, outside any
		// test case, being read (nil when none).
		outside *junitCase
	)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			if src.err != nil {
				return cases, src.err
			}
			return cases, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			root = true
			switch local := t.Name.Local; {
			case tc == nil && local == "testsuite":
				suites = append(suites, attr(t, "name"))
			case tc == nil && local == "testsuites":
				suites = append(suites, "") // its name is the run's, not a suite's
			case tc == nil && local == "testcase":
				tc = &junitCase{name: caseName(attr(t, "classname"), attr(t, "name"), suites), status: Pass, depth: depth, collected: true,
					unit: caseName(attr(t, "classname"), attr(t, "name"), nil)}
				if tc.name == "" {
					tc.name = "testcase " + strconv.Itoa(cases+1)
				}
			case tc == nil && outside == nil && len(suites) > 0 && (local == "failure" || local == "error"):
				outside = &junitCase{name: suiteName(suites), msg: &head{}, depth: depth}
				if m := strings.TrimSpace(attr(t, "message")); m != "" {
					outside.msg.add(m + "\n")
				}
			case tc != nil && depth == tc.depth+1 && (local == "failure" || local == "error"):
				if local == "error" && strings.TrimSpace(attr(t, "message")) == collectionFailure {
					tc.collected = false
				}
				if tc.status != Fail {
					tc.status, tc.msg = Fail, &head{}
				} else {
					tc.msg.add("\n")
				}
				if m := strings.TrimSpace(attr(t, "message")); m != "" {
					tc.msg.add(m)
					tc.msg.add("\n")
				}
				text = true
			case tc != nil && depth == tc.depth+1 && local == "skipped":
				if tc.status == Pass {
					tc.status = Skip
				}
			}
		case xml.CharData:
			if text && tc != nil && tc.msg != nil && len(tc.msg.b) < MaxMessage+8 {
				tc.msg.addBytes(t)
			}
			if outside != nil && len(outside.msg.b) < MaxMessage+8 {
				outside.msg.addBytes(t)
			}
		case xml.EndElement:
			switch {
			case outside != nil && depth == outside.depth:
				rep.AddBroken(Broken{Unit: outside.name, Reason: ErrorOutside, Message: trimLines(outside.msg.String())})
				outside = nil
			case tc != nil && depth == tc.depth:
				msg := ""
				if tc.status == Fail {
					msg = trimLines(tc.msg.String())
				}
				if !tc.collected {
					unit := tc.unit
					if unit == "" {
						unit = tc.name
					}
					rep.AddBroken(Broken{Unit: unit, Reason: CollectionError, Message: msg})
				} else {
					rep.Add(Test{Name: validUTF8(tc.name), Status: tc.status, Message: msg})
				}
				cases++
				tc = nil
			case tc != nil && depth == tc.depth+1:
				text = false
			case tc == nil && (t.Name.Local == "testsuite" || t.Name.Local == "testsuites") && len(suites) > 0:
				suites = suites[:len(suites)-1]
			}
			depth--
		}
	}
	if !root {
		return cases, malformed("no XML element in the report")
	}
	return cases, nil
}

// suiteName is the name of the nearest named suite, "testsuite" when
// none is.
func suiteName(suites []string) string {
	for i := len(suites) - 1; i >= 0; i-- {
		if n := strings.TrimSpace(suites[i]); n != "" {
			return n
		}
	}
	return "testsuite"
}

// caseName names a test case: "classname.name", or after the nearest
// named <testsuite>, or name alone.
func caseName(class, name string, suites []string) string {
	class, name = strings.TrimSpace(class), strings.TrimSpace(name)
	if class == "" {
		for i := len(suites) - 1; i >= 0 && class == ""; i-- {
			class = strings.TrimSpace(suites[i])
		}
	}
	switch {
	case class == "" || class == name:
		return name
	case name == "":
		return class
	}
	return class + "." + name
}

// trimLines trims the blank lines and space around a message, keeping
// the indentation of its first line of text.
func trimLines(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 || strings.TrimSpace(s[:i]) != "" {
			return s
		}
		s = s[i+1:]
	}
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name && a.Name.Space == "" {
			return a.Value
		}
	}
	return ""
}

// charsetReader lets a document declare another encoding than UTF-8:
// ISO-8859-1 (and its kin) is converted, anything else read as UTF-8.
func charsetReader(label string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "windows-1252", "cp1252", "us-ascii", "ascii":
		return &latin1{r: bufio.NewReader(in)}, nil
	}
	return in, nil
}

// latin1 converts ISO-8859-1 to UTF-8.
type latin1 struct {
	r       *bufio.Reader
	pending []byte
}

func (l *latin1) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		if len(l.pending) > 0 {
			b[n] = l.pending[0]
			l.pending = l.pending[1:]
			n++
			continue
		}
		c, err := l.r.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		if c < 0x80 {
			b[n] = c
			n++
			continue
		}
		l.pending = append(l.pending[:0], 0xC0|c>>6, 0x80|c&0x3F)
		if n > 0 && l.r.Buffered() == 0 {
			break
		}
	}
	return n, nil
}
