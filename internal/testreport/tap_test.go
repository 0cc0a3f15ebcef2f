package testreport

import (
	"strconv"
	"strings"
	"testing"
)

func parseTAP(t *testing.T, in string) *Report {
	t.Helper()
	rep, err := ParseTAP(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestTAPPlanNotMet(t *testing.T) {
	checkReport(t, parseTAP(t, "TAP version 13\r\n1..4\r\nok 1 - a\r\nnot ok 2 - b\r\n"), []want{
		{"a", Pass, "", false},
		{"b", Fail, "", false},
		{"test 3", Fail, MissingFromTAP, false},
		{"test 4", Fail, MissingFromTAP, false},
	})
	// Out of order, the plan at the end.
	checkReport(t, parseTAP(t, "ok 3 - c\nok 1 - a\n1..3\n"), []want{
		{"c", Pass, "", false},
		{"a", Pass, "", false},
		{"test 2", Fail, MissingFromTAP, false},
	})
}

func TestTAPHugePlan(t *testing.T) {
	rep := parseTAP(t, "1..1000000000\nok 1 - a\n")
	if n := len(rep.Tests); n != 1+maxMissing+1 {
		t.Fatalf("%d tests", n)
	}
	if got := rep.Tests[1]; got.Name != "test 2" || got.Status != Fail || got.Message != MissingFromTAP {
		t.Errorf("second test %+v", got)
	}
	// Past MaxMessages failures, no message.
	last := rep.Tests[len(rep.Tests)-1]
	if want := "tests " + strconv.Itoa(maxMissing+2) + "..1000000000"; last.Name != want || last.Status != Fail || last.Message != "" {
		t.Errorf("last test %+v, want %q", last, want)
	}
}

func TestTAPBailOutWithoutPlan(t *testing.T) {
	rep := parseTAP(t, "ok 1 - a\nBail out!\nok 2 - b\n")
	checkReport(t, rep, []want{{"a", Pass, "", false}})
	checkBroken(t, rep, []Broken{{BailOutUnit, BailedOut, "bail out:"}})
	rep = parseTAP(t, "1..1\nok 1 - a\n  bail out! no disk\n")
	checkReport(t, rep, []want{{"a", Pass, "", false}})
	checkBroken(t, rep, []Broken{{BailOutUnit, BailedOut, "bail out: no disk"}})
	// A report of nothing but a Bail out! is a report.
	rep = parseTAP(t, "1..3\nBail out! cannot start\n")
	checkReport(t, rep, nil)
	checkBroken(t, rep, []Broken{{BailOutUnit, BailedOut, "bail out: cannot start"}})
}

// A name printed twice is one test, judged by its worst result: an "ok"
// forged before the real "not ok" changes nothing.
func TestTAPRepeatedName(t *testing.T) {
	rep := parseTAP(t, "ok 1 - adds\nnot ok 2 - adds\n  ---\n  message: real\n  ...\nok 3 - adds\nok 4 - skips # SKIP\nok 5 - skips\n1..5\n")
	checkReport(t, rep, []want{
		{"adds", Fail, "message: real", false},
		{"skips", Skip, "", false},
	})
}

func TestTAPLines(t *testing.T) {
	in := `make[1]: Entering directory '/src'
ok 1 - a \# b # skip later
not ok 2 # TODO x
ok 3 - c # Skipped: no network
not ok 4 - d # todo
ok - implicit number
ok 7
ok 8 -
not ok 9 desc without dash
okay, not a test line
ok 10 - \\ backslash \d
ok 11 - x (2)
ok 12 - x
ok 13 - x
ok 14 - x
not ok 15 - diag
# first
#second
    # indented: not this test's
# after
ok 16 - passing, its comments dropped
# nothing
`
	checkReport(t, parseTAP(t, in), []want{
		{"a # b", Skip, "", false},
		{"test 2", Skip, "", false},
		{"c", Skip, "", false},
		{"d", Skip, "", false},
		{"implicit number", Pass, "", false},
		{"test 7", Pass, "", false},
		{"test 8", Pass, "", false},
		{"desc without dash", Fail, "", false},
		{`\ backslash \d`, Pass, "", false},
		{"x (2)", Pass, "", false},
		{"x", Pass, "", false},
		{"diag", Fail, "first\nsecond", false},
		{"passing, its comments dropped", Pass, "", false},
	}) // and no "test 6": without a plan, nothing is missing
}

func TestTAPYAML(t *testing.T) {
	in := `ok 1 - a
  ---
  note: |
    not ok 9 - not a test: inside the YAML block
  ...
not ok 2 - b

  ---
  message: boom
  data:
    got: 1
ok 3 - c
not ok 4 - d
  ---
  message: "never closed"
`
	checkReport(t, parseTAP(t, in), []want{
		{"a", Pass, "", false},
		{"b", Fail, "message: boom\ndata:\n  got: 1", false},
		{"c", Pass, "", false},
		{"d", Fail, `message: "never closed"`, false},
	})
}

func TestTAPSubtests(t *testing.T) {
	// TAP 14 without "# Subtest:" comments, two levels deep.
	in := `TAP version 14
        ok 1 - leaf
        not ok 2 - sore leaf
          ---
          at: leaf.js:3
          ...
        1..2
    not ok 1 - middle
    1..1
not ok 1 - top
ok 2 - alone
    ok 1 - first
    ok 2
1..3
`
	checkReport(t, parseTAP(t, in+"ok 3 - second\n"), []want{
		{"top/middle/leaf", Pass, "", false},
		{"top/middle/sore leaf", Fail, "at: leaf.js:3", false},
		{"top/middle", Fail, "", false},
		{"top", Fail, "", false},
		{"alone", Pass, "", false},
		{"second/first", Pass, "", false},
		{"second/test 2", Pass, "", false},
		{"second", Pass, "", false},
	})
	// Cut short inside a subtest: its tests keep their "# Subtest:"
	// parent's name; the planned third test is missing.
	cut := strings.Replace(in, "    ok 1 - first", "# Subtest: second\n    ok 1 - first", 1)
	checkReport(t, parseTAP(t, cut), []want{
		{"top/middle/leaf", Pass, "", false},
		{"top/middle/sore leaf", Fail, "at: leaf.js:3", false},
		{"top/middle", Fail, "", false},
		{"top", Fail, "", false},
		{"alone", Pass, "", false},
		{"second/first", Pass, "", false},
		{"second/test 2", Pass, "", false},
		{"test 3", Fail, MissingFromTAP, false},
	})
}

func TestTAPTooDeep(t *testing.T) {
	in := "ok 1 - a\n" + strings.Repeat(" ", 4*maxDepth+4) + "not ok 1 - too deep\nok 2 - b\n"
	checkReport(t, parseTAP(t, in), []want{
		{"a", Pass, "", false},
		{"b", Pass, "", false},
	})
}
