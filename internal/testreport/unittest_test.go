package testreport

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// unittest-py311.txt is what `python3 -m unittest discover -v -s tests`
// (Python 3.11.7) printed on stderr for a class with a passing test, one
// with a docstring, a failure, an error, a skip, an expected failure, an
// unexpected success, a test printing on stderr, subtests failing twice,
// a class whose setUpClass fails, and a module that cannot be imported;
// the paths in its tracebacks shortened by hand.

func parseUnittest(t *testing.T, in string) *Report {
	t.Helper()
	rep, err := Parse(Format{Kind: Unittest}, strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestUnittestFixture(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "unittest-py311.txt"))
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, parseUnittest(t, string(data)), []want{
		{"test_a.A.test_doc", Pass, "", false},
		{"test_a.A.test_err", Fail, "Traceback (most recent call last):\n  File \"/src/tests/test_a.py\", line 11, in test_err\n    raise ValueError(\"boom\")\nValueError: boom", false},
		{"test_a.A.test_fail", Fail, "Traceback (most recent call last):\n  File \"/src/tests/test_a.py\", line 9, in test_fail\n    self.assertEqual(1, 2)\nAssertionError: 1 != 2", false},
		{"test_a.A.test_ok", Pass, "", false},
		{"test_a.A.test_print", Pass, "", false},
		{"test_a.A.test_skip", Skip, "", false},
		{"test_a.A.test_sub", Fail, "Traceback (most recent call last):\n  File \"/src/tests/test_a.py\", line 27, in test_sub\n    self.assertLess(i, 1)\nAssertionError: 1 not less than 1", false},
		{"test_a.A.test_us", Fail, "failed", false},
		{"test_a.A.test_xf", Pass, "", false},
		{"unittest.loader._FailedTest.test_broken", Fail, "ImportError: Failed to import test module: test_broken", true},
		{"test_a.B.setUpClass", Fail, "Traceback (most recent call last):\n  File \"/src/tests/test_a.py\", line 31, in setUpClass\n    raise RuntimeError(\"setup broke\")\nRuntimeError: setup broke", false},
	})
}

func TestUnittestOlderPython(t *testing.T) {
	// Before 3.11 the id in parentheses names the class only.
	in := "test_add (tests.test_money.MoneyTest) ... ok\ntest_sub (tests.test_money.MoneyTest) ... FAIL\n\n" +
		"======================================================================\nFAIL: test_sub (tests.test_money.MoneyTest)\n" +
		"----------------------------------------------------------------------\nAssertionError: 5 != 1\n\n" +
		"----------------------------------------------------------------------\nRan 2 tests in 0.001s\n\nFAILED (failures=1)\n"
	checkReport(t, parseUnittest(t, in), []want{
		{"tests.test_money.MoneyTest.test_add", Pass, "", false},
		{"tests.test_money.MoneyTest.test_sub", Fail, "AssertionError: 5 != 1", false},
	})
}

func TestUnittestKilled(t *testing.T) {
	// The run ended while a test ran: it has no result.
	checkReport(t, parseUnittest(t, "test_a (m.T.test_a) ... ok\ntest_b (m.T.test_b) ... "), []want{
		{"m.T.test_a", Pass, "", false},
		{"m.T.test_b", Fail, NoResult, false},
	})
}

func TestUnittestNotVerbose(t *testing.T) {
	_, err := ParseUnittest(strings.NewReader(".F\n====\nRan 2 tests in 0.001s\n\nFAILED (failures=1)\n"))
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "-v") {
		t.Errorf("err = %v, want a malformed report naming -v", err)
	}
	_, err = ParseUnittest(strings.NewReader("\n----------------------------------------------------------------------\nRan 0 tests in 0.000s\n\nNO TESTS RAN\n"))
	if !errors.Is(err, errNoTests) {
		t.Errorf("err = %v, want no tests", err)
	}
	_, err = ParseUnittest(strings.NewReader("Traceback (most recent call last):\nModuleNotFoundError: No module named 'x'\n"))
	if !errors.Is(err, ErrMalformed) {
		t.Errorf("err = %v, want malformed", err)
	}
}

func TestUnittestFormat(t *testing.T) {
	f, err := ParseFormat("unittest")
	if err != nil || f.Kind != Unittest || !f.FromStdout() || !f.FromStderr() || f.String() != "unittest" {
		t.Fatalf("ParseFormat(unittest) = %+v, %v", f, err)
	}
	if _, err := ParseFormat("unitest"); err == nil || !strings.Contains(err.Error(), `"unittest"`) {
		t.Errorf("a misspelled kind: %v", err)
	}
}

// TestLineMerger: lines of two streams written at once in pieces reach
// the reader whole.
func TestLineMerger(t *testing.T) {
	r, w := io.Pipe()
	m := NewLineMerger(w)
	out, errs := m.Stream(), m.Stream()
	var wg sync.WaitGroup
	write := func(s io.Writer, line string) {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			for _, piece := range []string{line[:3], line[3:7], line[7:] + "\n"} {
				s.Write([]byte(piece))
			}
		}
	}
	got := make(chan string)
	go func() {
		data, _ := io.ReadAll(r)
		got <- string(data)
	}()
	wg.Add(2)
	go write(out, "stdout line of the test")
	go write(errs, "test_a (m.T.test_a) ... ok")
	wg.Wait()
	errs.Write([]byte("no newline"))
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	lines := strings.Split(strings.TrimSuffix(<-got, "\n"), "\n")
	if len(lines) != 401 || lines[400] != "no newline" {
		t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
	for _, l := range lines[:400] {
		if l != "stdout line of the test" && l != "test_a (m.T.test_a) ... ok" {
			t.Fatalf("a torn line: %q", l)
		}
	}
}

// TestUnittestRealPython reads what this machine's python3 prints, where
// there is one.
func TestUnittestRealPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "tests"), 0o755)
	os.WriteFile(filepath.Join(dir, "tests", "test_m.py"), []byte(`import unittest
class M(unittest.TestCase):
    def test_pass(self):
        print("printed on stdout")
    def test_fail(self):
        self.assertEqual("a", "b")
    def test_sub(self):
        for i in range(2):
            with self.subTest(i=i):
                self.assertEqual(i, 0)
`), 0o644)
	cmd := exec.Command(py, "-m", "unittest", "discover", "-v", "-s", "tests")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	r, w := io.Pipe()
	m := NewLineMerger(w)
	cmd.Stdout, cmd.Stderr = m.Stream(), m.Stream()
	done := make(chan *Report)
	go func() {
		rep, err := ParseUnittest(r)
		if err != nil {
			t.Error(err)
		}
		io.Copy(io.Discard, r)
		done <- rep
	}()
	runErr := cmd.Run()
	m.Flush()
	w.Close()
	rep := <-done
	if runErr == nil {
		t.Fatal("the suite passed")
	}
	if rep == nil {
		t.FailNow()
	}
	checkReport(t, rep, []want{
		{"test_m.M.test_fail", Fail, "Traceback (most recent call last):", true},
		{"test_m.M.test_pass", Pass, "", false},
		{"test_m.M.test_sub", Fail, "Traceback", true},
	})
}

// FuzzUnittest feeds arbitrary bytes to the unittest reader: it never
// panics, and either fails with ErrMalformed or returns tests that keep
// the invariants of every report.
func FuzzUnittest(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "unittest-py311.txt")); err == nil {
		f.Add(data)
	}
	f.Add([]byte("test_a (m.T.test_a)\nDoc ... \nout\nFAIL\n======================\nERROR: x (m)\n---------------------\nRan 1 test in 0s\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := ParseUnittest(strings.NewReader(string(data)))
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error not ErrMalformed: %v", err)
			}
			return
		}
		checkInvariants(t, Unittest, rep)
	})
}

// BenchmarkParseUnittest10k parses the -v output of 10,000 tests in 10
// modules, every 100th failing with a traceback.
func BenchmarkParseUnittest10k(b *testing.B) {
	var sb strings.Builder
	var failures strings.Builder
	for m := 0; m < 10; m++ {
		for i := 0; i < 1000; i++ {
			id := "tests.test_mod" + string(rune('a'+m)) + ".ModTest.test_case_" + strings.Repeat("x", i%7) + itoa(i)
			res := "ok"
			if i%100 == 0 {
				res = "FAIL"
				failures.WriteString("======================================================================\nFAIL: test_case (" + id + ")\n" +
					"----------------------------------------------------------------------\nTraceback (most recent call last):\n  File \"tests/x.py\", line 9, in test_case\n    self.assertEqual(1, 2)\nAssertionError: 1 != 2\n\n")
			}
			sb.WriteString("test_case (" + id + ") ... " + res + "\n")
		}
	}
	sb.WriteString("\n" + failures.String() + "----------------------------------------------------------------------\nRan 10000 tests in 1.234s\n\nFAILED (failures=100)\n")
	data := sb.String()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := ParseUnittest(strings.NewReader(data))
		if err != nil || len(rep.Tests) != 10000 {
			b.Fatalf("%v, %d tests", err, len(rep.Tests))
		}
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
