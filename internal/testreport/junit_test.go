package testreport

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func parseJUnitString(t *testing.T, in string) *Report {
	t.Helper()
	rep, err := ParseJUnit(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestJUnitNaming(t *testing.T) {
	in := `<testsuites name="all">
  <testsuite name="outer">
    <testsuite name="inner">
      <testcase name="t1"/>
      <testcase name=" t2 " classname="pkg.C"/>
    </testsuite>
    <testcase name="t3"/>
    <testsuite><testcase name="t5"/></testsuite>
  </testsuite>
  <testcase name="t4"/>
  <testcase classname="only.Class"/>
  <testcase/>
</testsuites>`
	checkReport(t, parseJUnitString(t, in), []want{
		{"inner.t1", Pass, "", false},
		{"pkg.C.t2", Pass, "", false},
		{"outer.t3", Pass, "", false},
		{"outer.t5", Pass, "", false},
		{"t4", Pass, "", false},
		{"only.Class", Pass, "", false},
		{"testcase 7", Pass, "", false},
	})
}

func TestJUnitOutcomes(t *testing.T) {
	huge := strings.Repeat("trace line\n", 1000)
	in := `<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="s">
  <testcase name="fail-and-skip"><skipped/><failure message="m">text</failure></testcase>
  <testcase name="error"><error type="E">
    only text
  </error></testcase>
  <testcase name="rerun"><failure message="first"/><failure message="second">again</failure></testcase>
  <testcase name="bare"><failure/></testcase>
  <testcase name="huge"><failure message="big">` + huge + `</failure><system-out>` + huge + `</system-out></testcase>
  <testcase name="flaky"><flakyFailure message="once"/><system-out>out</system-out><system-err>err</system-err></testcase>
  <testcase name="dup"><failure message="broke"/></testcase>
  <testcase name="dup"/>
  <testcase name="entity"><failure message="a&#10;b &amp; &lt;c&gt; &nbsp;"><![CDATA[<raw> & ]]></failure></testcase>
</testsuite>`
	checkReport(t, parseJUnitString(t, in), []want{
		{"s.fail-and-skip", Fail, "m\ntext", false},
		{"s.error", Fail, "    only text", false},
		{"s.rerun", Fail, "first\n\nsecond\nagain", false},
		{"s.bare", Fail, "", false},
		{"s.huge", Fail, ("big\n" + huge)[:MaxMessage], false},
		{"s.flaky", Pass, "", false},
		{"s.dup", Fail, "broke", false},
		{"s.entity", Fail, "a\nb & <c>\n<raw> &", false}, // &nbsp; read, then trimmed
	})
}

func TestJUnitLatin1(t *testing.T) {
	in := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><testsuite name=\"caf\xe9\"><testcase name=\"na\xefve\"/></testsuite>"
	checkReport(t, parseJUnitString(t, in), []want{{"café.naïve", Pass, "", false}})
}

// An external entity is not read: the document is malformed.
func TestJUnitExternalEntity(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	in := `<?xml version="1.0"?><!DOCTYPE t [<!ENTITY e SYSTEM "file://` + secret + `">]><testcase name="&e;"/>`
	rep, err := ParseJUnit(strings.NewReader(in))
	if !errors.Is(err, ErrMalformed) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("%+v, %v", rep, err)
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, "/") {
			continue
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReadJUnit(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"reports/b.xml":    `<testsuite name="B"><testcase name="two" classname="A"/><testcase name="three"/></testsuite>`,
		"reports/a.xml":    `<testsuite name="A"><testcase name="one"/><testcase name="two"><failure message="no"/></testcase></testsuite>`,
		"reports/c.xml/":   "", // a directory
		"reports/d.xml":    `<testsuites/>`,
		"reports/e.txt":    "not matched",
		"other/TEST-x.xml": `<testsuite name="X"><testcase name="x"/></testsuite>`,
	})
	f, err := ParseFormat("junit:reports/*.xml")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ReadJUnit(f, dir)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, rep, []want{
		{"A.one", Pass, "", false},
		{"A.two", Fail, "no", false}, // b.xml's pass does not replace a.xml's failure
		{"B.three", Pass, "", false},
	})
	rep, err = ReadJUnit(Format{Kind: JUnit, Path: "other/TEST-x.xml"}, dir)
	if err != nil || len(rep.Tests) != 1 {
		t.Errorf("one file: %+v, %v", rep, err)
	}
}

func TestReadJUnitErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"r/a.xml":     `<testsuite name="A"><testcase name="one"/></testsuite>`,
		"r/b.xml":     `<testsuite name="B"><testcase name="two">`,
		"e/empty.xml": "",
		"n/none.xml":  `<testsuites/>`,
	})
	outside := writeFiles(t, map[string]string{"x.xml": `<testsuite name="X"><testcase name="one"/></testsuite>`})
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, says string
		noFile     bool
	}{
		{"out/*.xml", `no report file matches "out/*.xml"`, true},
		{"r/c.xml", `no report file matches "r/c.xml"`, true},
		{"r", `no report file matches "r"`, true}, // a directory
		{"r/*.xml", "r/b.xml: malformed test report: XML syntax error on line 1: unexpected EOF", false},
		{"out/x.xml", `no report file matches "out/x.xml"`, true}, // a link out of the working tree
		{"e/*.xml", "empty.xml: malformed test report: no XML element", false},
		{"n/*.xml", "malformed test report: no tests in the files matching n/*.xml", false},
		{"r/[", "syntax error in pattern", false},
	} {
		rep, err := ReadJUnit(Format{Kind: JUnit, Path: c.path}, dir)
		if !errors.Is(err, ErrMalformed) || errors.Is(err, ErrNoReport) != c.noFile || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %+v, %v; want an error saying %q", c.path, rep, err, c.says)
		}
	}
}

// pytest's report of a module it could not collect, and an error of a
// suite outside any test case, are broken units, not tests.
func TestJUnitBrokenUnits(t *testing.T) {
	in := `<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="0" tests="2">
<testcase classname="" name="tests.test_new" time="0.000"><error message="collection failure">ImportError while importing test module 'tests/test_new.py'.
E   ModuleNotFoundError: No module named 'nope'</error></testcase>
<testcase classname="tests.test_ok" name="test_a" time="0.001"/>
<testcase classname="tests.test_ok" name="test_b" time="0.001"><error message="failed on setup with &quot;boom&quot;">setup</error></testcase>
</testsuite>
<testsuite name="integration"><error message="suite setup failed">database unreachable</error><testcase name="c"/></testsuite>
</testsuites>`
	rep, err := ParseJUnit(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, rep, []want{
		{"tests.test_ok.test_a", Pass, "", false},
		{"tests.test_ok.test_b", Fail, "failed on setup with \"boom\"\nsetup", false},
		{"integration.c", Pass, "", false},
	})
	checkBroken(t, rep, []Broken{
		{"tests.test_new", CollectionError, "collection failure\nImportError while importing test module 'tests/test_new.py'.\nE   ModuleNotFoundError: No module named 'nope'"},
		{"integration", ErrorOutside, "suite setup failed\ndatabase unreachable"},
	})
}
