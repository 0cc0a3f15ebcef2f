package testreport

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzParse feeds arbitrary bytes to the three parsers: none may panic;
// each either fails with ErrMalformed or returns tests with non-empty,
// unique names, a valid status and a bounded message.
func FuzzParse(f *testing.F) {
	var files []string
	for _, ext := range []string{"json", "tap", "xml"} {
		m, _ := filepath.Glob("testdata/*." + ext)
		files = append(files, m...)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, c := range malformedInputs {
		f.Add([]byte(c.in))
	}
	f.Add([]byte("1..3\n    ok 1 - a\n# Subtest: b\nnot ok 2 - b\n  ---\n  x: 1\n  ...\nBail out! stop\n"))
	f.Add([]byte(`{"Action":"run","Package":"p","Test":"T"}` + "\n" + `{"Action":"output","Package":"p","Test":"T","Output":"\u00e9\n"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for kind, parse := range map[string]func(*bytes.Reader) (*Report, error){
			GoJSON: func(r *bytes.Reader) (*Report, error) { return ParseGoJSON(r) },
			TAP:    func(r *bytes.Reader) (*Report, error) { return ParseTAP(r) },
			JUnit:  func(r *bytes.Reader) (*Report, error) { return ParseJUnit(r) },
		} {
			rep, err := parse(bytes.NewReader(data))
			if err != nil {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("%s: error not ErrMalformed: %v", kind, err)
				}
				continue
			}
			checkInvariants(t, kind, rep)
		}
	})
}

func checkInvariants(t *testing.T, kind string, rep *Report) {
	t.Helper()
	if len(rep.Tests) == 0 && len(rep.Broken) == 0 {
		t.Fatalf("%s: no tests, no broken unit and no error", kind)
	}
	units := map[string]bool{}
	for _, b := range rep.Broken {
		switch {
		case b.Unit == "" || units[b.Unit]:
			t.Fatalf("%s: broken unit %q empty or twice", kind, b.Unit)
		case b.Reason == "":
			t.Fatalf("%s: broken unit %q without a reason", kind, b.Unit)
		case len(b.Message) > MaxMessage || !utf8.ValidString(b.Unit) || !utf8.ValidString(b.Message):
			t.Fatalf("%s: broken unit %q: message of %d bytes, or invalid UTF-8", kind, b.Unit, len(b.Message))
		}
		units[b.Unit] = true
	}
	seen := map[string]bool{}
	messages := 0
	for _, tt := range rep.Tests {
		switch {
		case tt.Name == "":
			t.Fatalf("%s: a test without name", kind)
		case seen[tt.Name]:
			t.Fatalf("%s: %q twice", kind, tt.Name)
		case tt.Status != Pass && tt.Status != Fail && tt.Status != Skip:
			t.Fatalf("%s: %q has status %q", kind, tt.Name, tt.Status)
		case len(tt.Message) > MaxMessage:
			t.Fatalf("%s: %q has a message of %d bytes", kind, tt.Name, len(tt.Message))
		case tt.Message != "" && tt.Status != Fail:
			t.Fatalf("%s: %q is a %s with a message", kind, tt.Name, tt.Status)
		case !utf8.ValidString(tt.Name) || !utf8.ValidString(tt.Message):
			t.Fatalf("%s: %q: invalid UTF-8", kind, tt.Name)
		}
		seen[tt.Name] = true
		if tt.Message != "" {
			messages++
		}
		if got, ok := rep.Lookup(tt.Name); !ok || got != tt {
			t.Fatalf("%s: Lookup(%q) = %+v, %v", kind, tt.Name, got, ok)
		}
	}
	if messages > MaxMessages {
		t.Fatalf("%s: %d messages", kind, messages)
	}
}

// FuzzEventScan checks the fast reader of test2json lines against
// encoding/json: where it reads a line, it must read what json.Unmarshal
// reads.
func FuzzEventScan(f *testing.F) {
	data, err := os.ReadFile("testdata/gotest-build-failed.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		f.Add(line)
	}
	f.Add([]byte(`{"action":"pass","TEST":"a\ud83d\ude00\ud800x\u00e9\/","Package":null,"Elapsed":-1.5e+3,"X":true}`))
	f.Add([]byte(`{"Action":"pass","Teſt":"long s","Elapsed":01}`))
	f.Add([]byte(` { "Action" : "run" , "Test" : "\t" } `))
	f.Fuzz(func(t *testing.T, line []byte) {
		var fast event
		var scratch []byte
		if !scanEvent(line, &fast, &scratch) {
			return
		}
		var slow event
		if err := json.Unmarshal(line, &slow); err != nil {
			t.Fatalf("scanEvent read %q, json.Unmarshal: %v", line, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: scanEvent %+v, json.Unmarshal %+v", line, fast, slow)
		}
	})
}
