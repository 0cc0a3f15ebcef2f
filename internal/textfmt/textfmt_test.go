package textfmt

import (
	"strings"
	"testing"
)

func TestFieldAndList(t *testing.T) {
	var b strings.Builder
	Field(&b, "title", "Parse\r\narguments  \n\nand flags")
	Field(&b, "goal", "")
	List(&b, "acceptance", []string{"go test passes", "two\nlines"})
	List(&b, "depends_on", nil)
	want := "title: Parse\n  arguments\n\n  and flags\ngoal:\nacceptance:\n- go test passes\n- two\n  lines\ndepends_on: (none)\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

func TestTask(t *testing.T) {
	var b strings.Builder
	Task(&b, "Parse", "", []string{"go test passes"})
	if want := "title: Parse\ngoal:\nacceptance:\n- go test passes\n"; b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

func TestOneLine(t *testing.T) {
	for _, tt := range []struct {
		s    string
		max  int
		want string
	}{{"a\n b\t c", 10, "a b c"}, {"héllo world", 3, "hé…"}, {"abc", 3, "abc"}} {
		if got := OneLine(tt.s, tt.max); got != tt.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
		}
	}
}
