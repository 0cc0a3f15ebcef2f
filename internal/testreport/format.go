// Package testreport reads the test reports guards and checks produce
// (SPEC §18): `go test -json` and TAP on their stdout, JUnit XML in files
// they write. A report turns a guard's single exit status into one
// result per test, and the units whose tests could not run (a package
// that does not build, a module that could not be collected, a Bail
// out!), which is what a baseline compares: a test that passed on the
// checkpoint and fails now is a regression, and so is a new failing test
// or a new broken unit.
//
// A reader of another format adds tests with Report.Add (a name seen
// twice keeps its worst result) and broken units with Report.AddBroken,
// and returns an error wrapping ErrMalformed when its input is not a
// report of its kind.
package testreport

import (
	"fmt"
	"strings"
)

// Kinds of report.
const (
	GoJSON = "go-json" // stdout is `go test -json`
	TAP    = "tap"     // stdout is TAP (13 or 14)
	JUnit  = "junit"   // JUnit XML files the command writes
)

// Format is a guard's or check's `report`.
type Format struct {
	Kind string
	// Path is the JUnit files' path relative to the working tree, a glob
	// allowed ("junit:PATH").
	Path string
}

// String is the format as config.toml and tree.json write it.
func (f Format) String() string {
	if f.Kind == JUnit {
		return JUnit + ":" + f.Path
	}
	return f.Kind
}

// FromStdout reports whether the report is read from the command's
// stdout (rather than from files it writes).
func (f Format) FromStdout() bool { return f.Kind == GoJSON || f.Kind == TAP || f.Kind == Unittest }

// FromStderr reports whether the report is read from the command's
// stderr too, line by line with its stdout (unittest prints on stderr).
func (f Format) FromStderr() bool { return f.Kind == Unittest }

// ParseFormat reads a `report` value: "go-json", "tap", "unittest" or
// "junit:PATH".
// "" is no report (the zero Format, ok).
func ParseFormat(s string) (Format, error) {
	switch {
	case s == "":
		return Format{}, nil
	case s == GoJSON || s == TAP || s == Unittest:
		return Format{Kind: s}, nil
	case strings.HasPrefix(s, JUnit+":"):
		p := strings.TrimSpace(strings.TrimPrefix(s, JUnit+":"))
		if p == "" || strings.HasPrefix(p, "/") || strings.Contains("/"+p+"/", "/../") {
			return Format{}, fmt.Errorf("report %q: want junit:PATH with PATH relative to the working tree, inside it, for example \"junit:reports/junit.xml\"", s)
		}
		return Format{Kind: JUnit, Path: p}, nil
	}
	return Format{}, fmt.Errorf(`report %q: want "go-json" (stdout of go test -json), "tap" (stdout in TAP), "unittest" (python3 -m unittest -v) or "junit:PATH" (JUnit XML files the command writes, for example "junit:reports/*.xml")`, s)
}
