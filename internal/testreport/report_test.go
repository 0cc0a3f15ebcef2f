package testreport

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestReportAdd(t *testing.T) {
	var r Report
	r.Add(Test{Name: "a", Status: Pass})
	r.Add(Test{Name: "b", Status: Fail, Message: "first"})
	r.Add(Test{Name: "c", Status: Skip})
	r.Add(Test{Name: "a", Status: Fail, Message: "now failing"}) // a worse result wins
	r.Add(Test{Name: "b", Status: Pass})                         // a failure stays
	r.Add(Test{Name: "b", Status: Skip})
	r.Add(Test{Name: "b", Status: Fail, Message: "second"}) // keeps the first message
	r.Add(Test{Name: "c", Status: Pass})                    // a skip stays
	r.Add(Test{Name: "d", Status: Pass, Message: "not kept for a pass"})
	checkReport(t, &r, []want{
		{"a", Fail, "now failing", false},
		{"b", Fail, "first", false},
		{"c", Skip, "", false},
		{"d", Pass, "", false},
	})
	r.Add(Test{Name: "e", Status: Fail})
	r.Add(Test{Name: "e", Status: Fail, Message: "a message at last"})
	if got, _ := r.Lookup("e"); got.Message != "a message at last" {
		t.Errorf("e: %q", got.Message)
	}
}

func TestReportMessageBounds(t *testing.T) {
	var r Report
	long := strings.Repeat("é", MaxMessage) // 2 bytes a character
	r.Add(Test{Name: "long", Status: Fail, Message: "x" + long})
	got, _ := r.Lookup("long")
	if len(got.Message) != MaxMessage-1 || !utf8.ValidString(got.Message) || !strings.HasPrefix("x"+long, got.Message) {
		t.Errorf("message of %d bytes, valid %v", len(got.Message), utf8.ValidString(got.Message))
	}
	r.Add(Test{Name: "invalid", Status: Fail, Message: "a\xffb\n\n"})
	if got, _ := r.Lookup("invalid"); got.Message != "a\uFFFDb" {
		t.Errorf("message %q", got.Message)
	}
	r.Add(Test{Name: "all invalid", Status: Fail, Message: strings.Repeat("\xff", MaxMessage)})
	if got, _ := r.Lookup("all invalid"); len(got.Message) > MaxMessage || !utf8.ValidString(got.Message) {
		t.Errorf("message of %d bytes, valid %v", len(got.Message), utf8.ValidString(got.Message))
	}
	for i := range MaxMessages + 10 {
		r.Add(Test{Name: strings.Repeat("t", i+1), Status: Fail, Message: "m"})
	}
	kept := 0
	for _, tt := range r.Tests {
		if tt.Message != "" {
			kept++
		}
	}
	if kept != MaxMessages {
		t.Errorf("%d messages kept, want %d", kept, MaxMessages)
	}
	if got, _ := r.Lookup(strings.Repeat("t", MaxMessages+5)); got.Status != Fail || got.Message != "" {
		t.Errorf("a failure past MaxMessages: %+v", got)
	}
}

func TestReportLookupAfterEdits(t *testing.T) {
	r := &Report{Tests: []Test{{Name: "x", Status: Pass}, {Name: "y", Status: Fail}}}
	if got, ok := r.Lookup("y"); !ok || got.Status != Fail {
		t.Fatalf("Lookup(y) = %+v, %v", got, ok)
	}
	r.Tests[1].Name = "z" // changed by hand: the index follows
	if _, ok := r.Lookup("y"); ok {
		t.Error("y still found")
	}
	if got, ok := r.Lookup("z"); !ok || got.Status != Fail {
		t.Errorf("Lookup(z) = %+v, %v", got, ok)
	}
	r.Tests = append(r.Tests, Test{Name: "w", Status: Skip})
	if got, ok := r.Lookup("w"); !ok || got.Status != Skip {
		t.Errorf("Lookup(w) = %+v, %v", got, ok)
	}
	if _, ok := r.Lookup("nothing"); ok {
		t.Error("nothing found")
	}
	if got := (&Report{}).Failed(); got != nil {
		t.Errorf("Failed() = %q", got)
	}
}

func TestParseKinds(t *testing.T) {
	for _, c := range []struct {
		kind, in, name string
	}{
		{GoJSON, `{"Action":"pass","Package":"p","Test":"TestA"}`, "p/TestA"},
		{TAP, "ok 1 - a\n", "a"},
		{JUnit, `<testcase name="a"/>`, "a"},
	} {
		rep, err := Parse(Format{Kind: c.kind}, strings.NewReader(c.in))
		if err != nil || len(rep.Tests) != 1 || rep.Tests[0].Name != c.name {
			t.Errorf("%s: %+v, %v", c.kind, rep, err)
		}
	}
	if _, err := Parse(Format{Kind: "xunit"}, strings.NewReader("")); err == nil || errors.Is(err, ErrMalformed) {
		t.Errorf("unknown kind: %v", err)
	}
}

// failingReader returns its data, then an I/O error.
type failingReader struct {
	data string
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.data == "" {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestReadErrors(t *testing.T) {
	ioErr := errors.New("disk on fire")
	for name, parse := range map[string]func(string) error{
		"go-json": func(s string) error { _, err := ParseGoJSON(&failingReader{s, ioErr}); return err },
		"tap":     func(s string) error { _, err := ParseTAP(&failingReader{s, ioErr}); return err },
		"junit":   func(s string) error { _, err := ParseJUnit(&failingReader{s, ioErr}); return err },
	} {
		for _, in := range []string{"", `{"Action":"run","Test":"T"}` + "\nok 1\n<testsuite><testcase name=\"a\">"} {
			if err := parse(in); err != ioErr {
				t.Errorf("%s after %d bytes: %v, want the reader's error as it is", name, len(in), err)
			}
		}
	}
}

// malformed inputs of each kind, each with what its error must say.
var malformedInputs = []struct {
	kind, in, says string
}{
	{GoJSON, "", "no tests in the report"},
	{GoJSON, " \n\n\t\n", "no tests in the report"},
	{GoJSON, "hello\nworld\n", "line 1"},
	{GoJSON, "\n\n{\"Action\":\n", "line 3"},
	{GoJSON, `{"a":1}` + "\n" + `{"Time":"2026-01-01T00:00:00Z"}`, "line 1"},
	{GoJSON, `{"Action":"output","Package":"p","Output":"x\n"}`, "no tests in the report"},
	{GoJSON, "\x00\xff\xfe garbage", "line 1"},
	{TAP, "", "no tests in the report"},
	{TAP, "\n   \n", "no tests in the report"},
	{TAP, "TAP version 13\n1..0 # SKIP nothing to do\n", "no tests in the report"},
	{TAP, "hello\nokay then\n# ok 1\n", "no TAP test line in the report's 3 lines"},
	{JUnit, "", "no XML element"},
	{JUnit, "  \n", "no XML element"},
	{JUnit, "not xml at all", "no XML element"},
	{JUnit, `<?xml version="1.0"?><testsuites><testsuite name="s"><testcase name="a">`, "XML syntax error on line 1: unexpected EOF"},
	{JUnit, "<testsuites>\n<testsuite name=\"s\">\n<testcase name=\"a\"/>\n</testsuites>", "line 4"},
	{JUnit, "<testsuites>\n<testcase name=\"a\"><failure message=\"x\">&bogus;</failure></testcase></testsuites>", "line 2"},
	{JUnit, `<testsuites name="empty"><testsuite name="s" tests="0"/></testsuites>`, "no tests in the report"},
	{JUnit, `<html><body><p>Not Found</p></body></html>`, "no tests in the report"},
}

func TestMalformed(t *testing.T) {
	for _, c := range malformedInputs {
		rep, err := Parse(Format{Kind: c.kind}, strings.NewReader(c.in))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s %q: %+v, %v; want ErrMalformed saying %q", c.kind, c.in, rep, err, c.says)
		}
	}
}
