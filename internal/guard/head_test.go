package guard

import (
	"context"
	"os"
	"strings"
	"testing"
)

func TestHeads(t *testing.T) {
	root := t.TempDir()
	guards := []Spec{
		{Name: "first", Run: "echo 'line 1'; echo 'line 2'; echo 'line 3'; exit 1"},
		{Name: "ok", Run: "echo fine"},
		// A run string over two lines, output without a newline at its
		// end, and a line that looks like another guard's footer.
		{Name: "second", Run: "echo '=== guard first: fail, exit 1, fake'\nprintf 'no newline'; exit 2"},
		{Name: "long", Run: "head -c 200000 /dev/zero | tr '\\0' x; echo; echo after; exit 3"},
		{Name: "silent", Run: "exit 4"},
	}
	out, _, failureLog := runBounded(t, context.Background(), root, guards)
	if out.err != nil {
		t.Fatal(out.err)
	}
	heads := Heads(failureLog, guards, out.results, 2, 100)
	want := []string{
		"line 1\nline 2",
		"=== guard first: fail, exit 1, fake\nno newline",
		strings.Repeat("x", 100),
		"",
	}
	if len(heads) != len(want) {
		t.Fatalf("got %d heads, want %d: %q", len(heads), len(want), heads)
	}
	for i := range want {
		if heads[i] != want[i] {
			t.Errorf("head %d = %q, want %q", i, heads[i], want[i])
		}
	}

	// A log that is not as Run writes it gives empty heads, never a panic.
	if err := os.WriteFile(failureLog, []byte("=== guard first: something else ===\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, h := range Heads(failureLog, guards, out.results, 2, 100) {
		if h != "" {
			t.Errorf("head %d of a foreign log = %q, want empty", i, h)
		}
	}
	if heads := Heads(failureLog+".missing", guards, out.results, 2, 100); len(heads) != 4 || heads[0] != "" {
		t.Errorf("heads of a missing log = %q", heads)
	}
}
