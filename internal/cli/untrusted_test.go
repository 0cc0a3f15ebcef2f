package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"
	"time"
	"unicode/utf8"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/prompt"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/status"
)

// hostile holds every kind of character that acts on a terminal: a clear
// screen, a carriage return overwriting the line, an OSC 52 clipboard
// write, NUL, DEL, a C1 CSI, a bidi override, a lone 8-bit CSI byte and a
// newline.
const hostile = "x\x1b[2J\rALL TESTS PASSED\x1b]52;c;aGk=\a\x00\x7f\u009b\u202e\x9b\ny"

// rawControl matches what must never reach a terminal from outside.
// (Bytes that are not UTF-8, such as a lone 0x9b, are checked apart.)
var rawControl = regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069]")

// fill sets every string reachable from v (fields, pointers, slices,
// maps) to s, allocating what is nil, so that a printer given v shows
// what it does with untrusted text in each field. A type met again
// below itself (a tree's children) is left empty.
func fill(v reflect.Value, s string) { fillSeen(v, s, map[reflect.Type]bool{}) }

func fillSeen(v reflect.Value, s string, seen map[reflect.Type]bool) {
	recursive := func(t reflect.Type) bool {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		return seen[t]
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Pointer:
		if recursive(v.Type()) {
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fillSeen(v.Elem(), s, seen)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			return
		}
		seen[v.Type()] = true
		defer delete(seen, v.Type())
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fillSeen(v.Field(i), s, seen)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 || recursive(v.Type()) {
			return // raw JSON is set by the caller
		}
		if v.Len() == 0 {
			v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		}
		for i := 0; i < v.Len(); i++ {
			fillSeen(v.Index(i), s, seen)
		}
	case reflect.Map:
		if v.Type().Key().Kind() == reflect.String {
			m := reflect.MakeMap(v.Type())
			m.SetMapIndex(reflect.ValueOf(s), reflect.Zero(v.Type().Elem()))
			v.Set(m)
		}
	}
}

func assertInert(t *testing.T, what, out string) {
	t.Helper()
	if loc := rawControl.FindStringIndex(out); loc != nil {
		t.Errorf("%s prints a raw control character at byte %d: %q", what, loc[0], out)
	}
	if !utf8.ValidString(out) {
		t.Errorf("%s prints bytes that are not UTF-8: %q", what, out)
	}
	if !bytes.Contains([]byte(out), []byte(`x\x1b[2J\rALL TESTS PASSED\x1b]52;c;aGk=\a\x00\x7f\u009b\u202e\x9b`)) {
		t.Errorf("%s does not show the hostile text escaped:\n%s", what, out)
	}
}

func TestShowIsInert(t *testing.T) {
	p := state.NewPaths(t.TempDir())
	runDir := p.RunDir(1)
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var m state.Meta
	fill(reflect.ValueOf(&m).Elem(), hostile)
	m.Message = mustJSON(t, map[string]any{"status": "done", "summary": hostile,
		"assumptions": []string{hostile}, "questions": []string{hostile},
		"children": []map[string]string{{"id": hostile, "title": hostile}}})
	var prov prompt.Provenance
	fill(reflect.ValueOf(&prov).Elem(), hostile)
	writeFile(t, filepath.Join(runDir, "context.json"), mustJSON(t, prov))
	var events bytes.Buffer
	for _, ev := range []any{
		map[string]any{"type": "item.completed", "item": map[string]any{"type": "command_execution", "command": hostile, "exit_code": 1}},
		map[string]any{"type": "item.completed", "item": map[string]any{"type": "file_change", "changes": []map[string]string{{"path": hostile}}}},
		map[string]any{"type": "error", "message": hostile},
	} {
		events.Write(append(mustJSON(t, ev), '\n'))
	}
	writeFile(t, filepath.Join(runDir, executor.EventsFileName), events.Bytes())
	writeFile(t, filepath.Join(runDir, "name\x1b[2J\r\u202e\x9b"), nil) // any byte but NUL and /

	var out bytes.Buffer
	printMeta(&out, p, runDir, &m)
	assertInert(t, "runner show", out.String())
	for _, field := range []string{"summary:", "assumed:", "question:", "child:", "commands:", "changed:", "event:", "error:", "evidence:", "limited:", "refused:", "note:", "files:"} {
		if !bytes.Contains(out.Bytes(), []byte("\n"+field)) {
			t.Errorf("runner show has no %q line:\n%s", field, out.String())
		}
	}
}

func TestStatusIsInert(t *testing.T) {
	var rep status.Report
	fill(reflect.ValueOf(&rep).Elem(), hostile)
	rep.Tree.Status = "blocked"
	var out bytes.Buffer
	printStatus(&out, &rep)
	assertInert(t, "runner status", out.String())
}

func TestPrunedShowIsInert(t *testing.T) {
	var r state.Record
	fill(reflect.ValueOf(&r).Elem(), hostile)
	r.Iteration, r.Usage = 3, nil
	var out bytes.Buffer
	printTrace(&out, 3, hostile, "pruned", &journalTrace{Records: []state.Record{r}, Files: []string{"state/journal.jsonl"}})
	assertInert(t, "runner show of a pruned iteration", out.String())
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
