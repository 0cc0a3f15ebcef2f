package testreport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fixtures in testdata/ are real reports, generated on the machine
// this package was written on from small throwaway projects:
//
//   - gotest.json: `go test -json ./ok` (Go 1.26.8) on a package with a
//     passing test, a failing one that prints a line first, a table test
//     with a passing and a failing subtest, and a skipped test.
//   - gotest-build-failed.json: `go test -json ./...` on the same module
//     with a second package that does not compile (Go 1.24+'s
//     build-output and build-fail events).
//   - gotest-timeout.json: `go test -json -timeout 1s` on a test that
//     sleeps 10 s: the test never gets its result.
//   - pytest.xml: pytest 7.2.1 (Debian's) --junitxml, with the root's
//     name="pytest tests" added by hand as pytest 8 writes it (no pytest
//     8 could be installed here); the rest is what pytest 8 writes too.
//   - jest-junit.xml: jest 30.5.2 with jest-junit 17.0.0.
//   - TEST-com.example.SlugTest.xml: Maven 3.8.7 with Surefire 2.22.3
//     and JUnit 4.13.2 (Debian's); its <properties> cut down by hand to
//     five.
//   - node.tap: `node --test --test-reporter=tap` (Node 20.20.2), with a
//     describe block (indented subtests), a skip and a todo.
//   - testmore.tap, testmore-bail.tap: Perl's Test::More (Perl 5.36,
//     `perl t.t 2>&1`): diagnostics, skip, todo, a test without
//     description, a repeated name, a BAIL_OUT.

// want is a test expected in a report; msg is the message's exact head
// (the whole message unless long is set).
type want struct {
	name, status, msg string
	long              bool
}

func checkReport(t *testing.T, rep *Report, wants []want) {
	t.Helper()
	if len(rep.Tests) != len(wants) {
		for _, tt := range rep.Tests {
			t.Logf("%q %s %q", tt.Name, tt.Status, tt.Message)
		}
		t.Fatalf("%d tests, want %d", len(rep.Tests), len(wants))
	}
	var failed []string
	for i, w := range wants {
		got := rep.Tests[i]
		if got.Name != w.name || got.Status != w.status {
			t.Errorf("test %d = %q %s, want %q %s", i, got.Name, got.Status, w.name, w.status)
		}
		if w.long && !strings.HasPrefix(got.Message, w.msg) || !w.long && got.Message != w.msg {
			t.Errorf("%s: message\n%q\nwant (head: %v)\n%q", w.name, got.Message, w.long, w.msg)
		}
		if len(got.Message) > MaxMessage {
			t.Errorf("%s: message of %d bytes", w.name, len(got.Message))
		}
		if l, ok := rep.Lookup(w.name); !ok || l != got {
			t.Errorf("Lookup(%q) = %+v, %v", w.name, l, ok)
		}
		if w.status == Fail {
			failed = append(failed, w.name)
		}
	}
	if got := rep.Failed(); strings.Join(got, "\n") != strings.Join(failed, "\n") {
		t.Errorf("Failed() = %q, want %q", got, failed)
	}
}

// checkBroken checks the broken units of rep.
func checkBroken(t *testing.T, rep *Report, wants []Broken) {
	t.Helper()
	if len(rep.Broken) != len(wants) {
		t.Fatalf("broken units %+v, want %+v", rep.Broken, wants)
	}
	for i, w := range wants {
		if rep.Broken[i] != w {
			t.Errorf("broken unit %d = %+v, want %+v", i, rep.Broken[i], w)
		}
	}
}

func parseFile(t *testing.T, name string) *Report {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rep *Report
	switch filepath.Ext(name) {
	case ".json":
		rep, err = Parse(Format{Kind: GoJSON}, f)
	case ".tap":
		rep, err = Parse(Format{Kind: TAP}, f)
	default:
		rep, err = ParseJUnit(f)
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rep
}

var goTestOK = []want{
	{"example.com/slug/ok/TestBasic", Pass, "", false},
	{"example.com/slug/ok/TestUpper", Fail, "checking upper case\n    slug_test.go:17: Slug(\"A B\") = \"A-B\", want \"a-b\"", false},
	{"example.com/slug/ok/TestTable", Fail, "", false},
	{"example.com/slug/ok/TestTable/x_y", Pass, "", false},
	{"example.com/slug/ok/TestTable/_z_", Fail, "    slug_test.go:25: got \"z\", want \"z-\"", false},
	{"example.com/slug/ok/TestUnicode", Skip, "", false},
}

func TestGoJSONFixture(t *testing.T) {
	checkReport(t, parseFile(t, "gotest.json"), goTestOK)
}

// A package that does not build is a broken unit, not a test: its
// package's tests are not in the report.
func TestGoJSONBuildFailed(t *testing.T) {
	rep := parseFile(t, "gotest-build-failed.json")
	checkReport(t, rep, goTestOK)
	checkBroken(t, rep, []Broken{{"example.com/slug/broken", BuildFailed,
		"# example.com/slug/broken [example.com/slug/broken.test]\nbroken/broken.go:5:1: syntax error: unexpected }, expected expression"}})
}

func TestGoJSONTimeout(t *testing.T) {
	rep := parseFile(t, "gotest-timeout.json")
	checkReport(t, rep, []want{
		{"example.com/slug/slow/TestQuick", Pass, "", false},
		{"example.com/slug/slow/TestSlow", Fail, NoResult + "\n    slow_test.go:11: waiting for the server\npanic: test timed out after 1s\n\trunning tests:\n\t\tTestSlow (1s)\n\ngoroutine 5 [running]:\n", true},
	})
	checkBroken(t, rep, nil) // its test failed: the package is not broken
}

func TestJUnitPytest(t *testing.T) {
	checkReport(t, parseFile(t, "pytest.xml"), []want{
		{"tests.test_slug.test_basic", Fail, "AssertionError: assert 'a b' == 'a-b'\n  - a-b\n  + a b\ndef test_basic():\n>       assert slug(\"a b\") == \"a-b\"\nE       AssertionError: assert 'a b' == 'a-b'\nE         - a-b\nE         + a b\n\ntests/test_slug.py:6: AssertionError", false},
		{"tests.test_slug.test_empty", Pass, "", false},
		{"tests.test_slug.test_unicode", Skip, "", false},
		{"tests.test_slug.test_param[x-x]", Pass, "", false},
		{"tests.test_slug.test_param[y z-y-z]", Fail, "AssertionError: assert 'y z' == 'y-z'\n  - y-z\n  + y z\ns = 'y z', want = 'y-z'\n\n    @pytest.mark.parametrize", true},
		{"tests.test_slug.test_fixture", Fail, "failed on setup with \"RuntimeError: fixture exploded\"\n@pytest.fixture\n    def broken():\n>       raise RuntimeError(\"fixture exploded\")\nE       RuntimeError: fixture exploded\n\ntests/test_slug.py:25: RuntimeError", false},
		{"tests.test_slug.test_known", Skip, "", false}, // xfail
	})
}

func TestJUnitJest(t *testing.T) {
	// jest-junit's classname and name are both "describe title test
	// title": the test is named once.
	checkReport(t, parseFile(t, "jest-junit.xml"), []want{
		{"slug joins words", Pass, "", false},
		{"slug lower-cases", Fail, "Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: \"a-b\"\nReceived: \"A-B\"\n    at Object.toBe (/tmp/jestgen/src/slug.test.js:8:25)\n", true},
		{"slug handles unicode", Skip, "", false},
		{"slug edge cases empty", Pass, "", false},
		{"top level", Pass, "", false},
	})
}

func TestJUnitSurefire(t *testing.T) {
	checkReport(t, parseFile(t, "TEST-com.example.SlugTest.xml"), []want{
		{"com.example.SlugTest.joinsWords", Pass, "", false},
		{"com.example.SlugTest.unicode", Skip, "", false},
		{"com.example.SlugTest.nullInput", Fail, "Cannot invoke \"String.trim()\" because \"s\" is null\njava.lang.NullPointerException: Cannot invoke \"String.trim()\" because \"s\" is null\n\tat com.example.SlugTest.nullInput(SlugTest.java:21)", false},
		{"com.example.SlugTest.lowerCases", Fail, "expected:<[a-b]> but was:<[A-B]>\norg.junit.ComparisonFailure: expected:<[a-b]> but was:<[A-B]>\n\tat com.example.SlugTest.lowerCases(SlugTest.java:16)", false},
	})
}

func TestTAPNode(t *testing.T) {
	checkReport(t, parseFile(t, "node.tap"), []want{
		{"joins words", Pass, "", false},
		{"lower-cases", Fail, "duration_ms: 2.416077\nlocation: '/tmp/tapgen/slug.test.js:10:1'\nfailureType: 'testCodeFailure'\nerror: |-\n  Expected values to be strictly equal:\n  \n  'A-B' !== 'a-b'\n  \ncode: 'ERR_ASSERTION'\nname: 'AssertionError'\nexpected: 'a-b'\nactual: 'A-B'\noperator: 'strictEqual'\nstack: |-\n  TestContext.<anonymous> (/tmp/tapgen/slug.test.js:11:10)\n", true},
		{"unicode", Skip, "", false},
		{"trailing dash", Skip, "", false}, // not ok # TODO
		{"edge cases/empty", Pass, "", false},
		{"edge cases/spaces only", Fail, "duration_ms: 0.495449\nlocation: '/tmp/tapgen/slug.test.js:24:3'\nfailureType: 'testCodeFailure'\nerror: |-\n  Expected values to be strictly equal:\n  \n  '' !== 'x'\n", true},
		{"edge cases", Fail, "duration_ms: 1.158861\ntype: 'suite'\nlocation: '/tmp/tapgen/slug.test.js:20:1'\nfailureType: 'subtestsFailed'\nerror: '1 subtest failed'\ncode: 'ERR_TEST_FAILURE'", false},
	})
}

func TestTAPTestMore(t *testing.T) {
	checkReport(t, parseFile(t, "testmore.tap"), []want{
		{"joins words", Pass, "", false},
		{"lower-cases", Fail, "  Failed test 'lower-cases'\n  at slug.t line 8.\n         got: 'A-B'\n    expected: 'a-b'", false},
		{"test 3", Pass, "", false},
		{"test 4", Skip, "", false},
		{"trailing dash", Skip, "", false},
	})
}

// A Bail out! is a broken unit; the planned tests it left out are not
// tests of the report.
func TestTAPBailOut(t *testing.T) {
	rep := parseFile(t, "testmore-bail.tap")
	checkReport(t, rep, []want{
		{"connects", Pass, "", false},
		{"reads config", Fail, "  Failed test 'reads config'\n  at bail.t line 6.", false},
	})
	checkBroken(t, rep, []Broken{{BailOutUnit, BailedOut, "bail out: database unreachable"}})
}
