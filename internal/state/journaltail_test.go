package state

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestScanJournalTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	lines := func(window int64, stopAt string) []string {
		t.Helper()
		var got []string
		err := ScanJournalTail(path, window, func(line []byte) bool {
			got = append(got, string(line))
			return string(line) != stopAt
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := lines(0, ""); got != nil {
		t.Errorf("missing file: lines %q, want none", got)
	}
	// A torn last line is left out even when it would decode: the next
	// append cuts it off.
	content := "{\"a\":1}\r\n{\"b\":22}\n{\"c\":3}\n{\"d\":4}"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		window int64
		stopAt string
		want   []string
	}{
		{0, "", []string{`{"a":1}`, `{"b":22}`, `{"c":3}`}},
		{int64(len(content)), "", []string{`{"a":1}`, `{"b":22}`, `{"c":3}`}},
		{int64(len(content)) - 3, "", []string{`{"b":22}`, `{"c":3}`}}, // the first line cut by the window
		{0, `{"b":22}`, []string{`{"a":1}`, `{"b":22}`}},               // fn stops the scan
	} {
		if got := lines(c.window, c.stopAt); !reflect.DeepEqual(got, c.want) {
			t.Errorf("window %d, stop at %q: lines %q, want %q", c.window, c.stopAt, got, c.want)
		}
	}
}
