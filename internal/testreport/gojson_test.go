package testreport

import (
	"os"
	"strings"
	"testing"
)

func parseGoJSON(t *testing.T, in string) *Report {
	t.Helper()
	rep, err := ParseGoJSON(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A run killed in the middle of a test: that test and its package never
// get their result.
func TestGoJSONKilled(t *testing.T) {
	data, err := os.ReadFile("testdata/gotest.json")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	cut := strings.Index(s, "slug_test.go:17")
	cut += strings.IndexByte(s[cut:], '\n') + 1 // after that line
	cut += 40                                   // and into the next one
	checkReport(t, parseGoJSON(t, s[:cut]), []want{
		{"example.com/slug/ok/TestBasic", Pass, "", false},
		{"example.com/slug/ok/TestUpper", Fail, NoResult + "\nchecking upper case\n    slug_test.go:17: Slug(\"A B\") = \"A-B\", want \"a-b\"", false},
	})
}

// Before Go 1.24 the build's errors were plain lines among the events
// (stderr merged), and the package's failure carried the rest.
func TestGoJSONOldBuildFailure(t *testing.T) {
	in := `# example.com/x
./x.go:3:1: syntax error: unexpected }
{"Action":"start","Package":"example.com/x"}
{"Action":"output","Package":"example.com/x","Output":"FAIL\texample.com/x [build failed]\n"}
{"Action":"fail","Package":"example.com/x","Elapsed":0}
{"Action":"output","Package":"example.com/z","Output":"# example.com/z\n"}
{"Action":"output","Package":"example.com/z","Output":"./z.go:3:1: syntax error\n"}
{"Action":"output","Package":"example.com/z","Output":"FAIL example.com/z [build failed]\n"}
{"Action":"fail","Package":"example.com/z","Elapsed":0}
{"Action":"start","Package":"example.com/y"}` + "\r" + `
{"Action":"run","Package":"example.com/y","Test":"TestA"}
{"Action":"pass","Package":"example.com/y","Test":"TestA","Elapsed":0}
{"Action":"output","Package":"example.com/y","Output":"ok  \texample.com/y\t0.1s\n"}
{"Action":"pass","Package":"example.com/y","Elapsed":0.1}
`
	rep := parseGoJSON(t, in)
	checkReport(t, rep, []want{
		{"example.com/y/TestA", Pass, "", false},
	})
	checkBroken(t, rep, []Broken{
		{"example.com/x", BuildFailed, "FAIL\texample.com/x [build failed]"},
		{"example.com/z", BuildFailed, "# example.com/z\n./z.go:3:1: syntax error\nFAIL example.com/z [build failed]"},
	})
}

// Go 1.24+: a package without tests that fails to build, and a package
// failing because of it.
func TestGoJSONDependencyBuildFailure(t *testing.T) {
	in := `{"Action":"start","Package":"example.com/lib"}
{"Action":"output","Package":"example.com/lib","Output":"?   \texample.com/lib\t[no test files]\n"}
{"Action":"skip","Package":"example.com/lib","Elapsed":0}
{"ImportPath":"example.com/lib2","Action":"build-output","Output":"# example.com/lib2\n"}
{"ImportPath":"example.com/lib2","Action":"build-output","Output":"lib2/lib.go:4:2: undefined: x\n"}
{"ImportPath":"example.com/lib2","Action":"build-fail"}
{"Action":"start","Package":"example.com/app"}
{"Action":"output","Package":"example.com/app","Output":"FAIL\texample.com/app [build failed]\n"}
{"Action":"fail","Package":"example.com/app","Elapsed":0,"FailedBuild":"example.com/lib2"}
{"Action":"fail","Package":"example.com/other","Elapsed":0,"FailedBuild":"example.com/lib2"}
{"ImportPath":"example.com/ext_test [example.com/ext.test]","Action":"build-fail"}
`
	rep := parseGoJSON(t, in)
	checkReport(t, rep, nil)
	dep := "the build of example.com/lib2 failed\n# example.com/lib2\nlib2/lib.go:4:2: undefined: x"
	checkBroken(t, rep, []Broken{
		{"example.com/app", BuildFailed, dep},
		{"example.com/other", BuildFailed, dep},
		{"example.com/ext", BuildFailed, ""}, // a build failure no package named
	})
}

// A package whose tests all pass but that fails (its TestMain, a panic
// at init, a setup that failed) is broken; one with a failing test is
// not; one that started and never ended, with no test failing, is.
func TestGoJSONPackageFailures(t *testing.T) {
	in := `{"Action":"start","Package":"m/main"}
{"Action":"run","Package":"m/main","Test":"TestX"}
{"Action":"pass","Package":"m/main","Test":"TestX"}
{"Action":"output","Package":"m/main","Output":"FAIL\tm/main\t0.002s\n"}
{"Action":"fail","Package":"m/main"}
{"Action":"start","Package":"m/tests"}
{"Action":"run","Package":"m/tests","Test":"TestY"}
{"Action":"fail","Package":"m/tests","Test":"TestY"}
{"Action":"fail","Package":"m/tests"}
{"Action":"start","Package":"m/setup"}
{"Action":"output","Package":"m/setup","Output":"FAIL\tm/setup [setup failed]\n"}
{"Action":"fail","Package":"m/setup"}
{"Action":"start","Package":"m/cut"}
{"Action":"output","Package":"m/cut","Output":"panic: at init\n"}
`
	rep := parseGoJSON(t, in)
	checkReport(t, rep, []want{
		{"m/main/TestX", Pass, "", false},
		{"m/tests/TestY", Fail, "", false},
	})
	checkBroken(t, rep, []Broken{
		{"m/main", FailedOutside, "FAIL\tm/main\t0.002s"},
		{"m/setup", BuildFailed, "FAIL\tm/setup [setup failed]"},
		{"m/cut", FailedOutside, NoResult + "\npanic: at init"},
	})
}

func TestGoJSONRepeatedAndOdd(t *testing.T) {
	long := strings.Repeat("y", MaxLine+10)
	big := strings.Repeat("z", 900<<10)
	in := `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"first try fails\n"}
{"Action":"fail","Package":"p","Test":"TestA"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"action":"FAIL","package":"p","test":"TestCase"}
{"Action":"fail","Package":"p","Test":"TestCase"}
{"Action":"pass","Package":"p","Test":"T\u00e9\ud83d\ude00\/x","Extra":{"nested":[1,2]}}
{"Action":"output","Package":"p","Test":"TestLong","Output":"` + long + `"}
{"Action":"output","Package":"p","Test":"TestBig","Output":"` + big + `"}
{"Action":"run","Package":"p","Test":"TestLong"}
{"Action":"output","Package":"p","Test":"TestLong","Output":"` + long + `"}
{"Action":"output","Package":"p","Test":"TestLong","Output":"short line\n"}
{"Action":"fail","Package":"p","Test":"TestLong"}
{"Action":"run","Package":"p","Test":"TestBig"}
{"Action":"output","Package":"p","Test":"TestBig","Output":"` + big + `"}
{"Action":"fail","Package":"p","Test":"TestBig"}
{"Action":"pass","Test":"NoPackage"}
{"Action":"pass"}
{"Action":"bench","Package":"p","Test":"BenchmarkX","Output":"1 ns/op"}
`
	checkReport(t, parseGoJSON(t, in), []want{
		{"p/TestA", Fail, "first try fails", false},
		{"p/TestCase", Fail, "", false}, // keys matched as encoding/json does; "FAIL" is no action
		{"p/Té😀/x", Pass, "", false},
		{"p/TestLong", Fail, "short line", false},
		{"p/TestBig", Fail, big[:MaxMessage], false},
		{"NoPackage", Pass, "", false},
	})
}
