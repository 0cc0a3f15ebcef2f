package verify

import (
	"path"
	"strings"
	"testing"
)

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		pattern, name string
		want          bool
	}{
		{"tests/**", "tests/a_test.go", true},
		{"tests/**", "tests/deep/x/y.txt", true},
		{"tests/**", "tests", true},
		{"tests", "tests/a_test.go", true}, // a folder protects what is below it
		{"tests", "testsuite/a.go", false},
		{"*_test.go", "calc_test.go", true},
		{"*_test.go", "pkg/calc_test.go", false}, // * does not cross /
		{"**/*_test.go", "pkg/calc_test.go", true},
		{"**/*_test.go", "calc_test.go", true},
		{"**/*_test.go", "a/b/c/calc_test.go", true},
		{"**/*_test.go", "a/b/c/calc.go", false},
		{"pkg/**/golden/*.txt", "pkg/golden/a.txt", true},
		{"pkg/**/golden/*.txt", "pkg/x/y/golden/a.txt", true},
		{"pkg/**/golden/*.txt", "pkg/x/y/golden", false},
		{"Makefile", "Makefile", true},
		{"Makefile", "src/Makefile", false},
		{"[ab].txt", "a.txt", true},
		{"[ab].txt", "c.txt", false},
		{"**", "anything/at/all", true},
	}
	for _, c := range cases {
		g, err := ParseGlob(c.pattern)
		if err != nil {
			t.Fatalf("ParseGlob(%q): %v", c.pattern, err)
		}
		if got := g.Match(c.name); got != c.want {
			t.Errorf("%q matches %q = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}

func TestParseGlobRefuses(t *testing.T) {
	for _, p := range []string{"", "/abs", "a//b", "../x", "a/./b", "[", "a/[b"} {
		if _, err := ParseGlob(p); err == nil {
			t.Errorf("ParseGlob(%q) accepted", p)
		}
	}
}

// FuzzGlobAgainstPathMatch checks that a pattern without "**" matches a
// path exactly as path.Match does, that "**" alone matches everything,
// and that a protected path protects everything below it.
func FuzzGlobAgainstPathMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"tests/*.go", "tests/a.go"}, {"a/b", "a/b"}, {"*", "x"}, {"a?c", "abc"},
		{"[a-c]/*", "b/zz"}, {`\*`, "*"}, {"**/x", "a/x"}, {"a/**/b", "a/b"}, {"*/*", "a"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		g, err := ParseGlob(pattern)
		if err != nil {
			return
		}
		if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, "//") || strings.HasSuffix(name, "/") {
			return // not a relative file path
		}
		if !strings.Contains(pattern, "**") && !strings.HasSuffix(pattern, "/") {
			want, err := path.Match(pattern, name)
			if err == nil && g.matchExact(name) != want {
				t.Fatalf("%q on %q: matchExact %v, path.Match %v", pattern, name, !want, want)
			}
		}
		if g.matchExact(name) && !g.Match(name+"/below") {
			t.Fatalf("%q matches %q but not what is below it", pattern, name)
		}
		all, _ := ParseGlob("**")
		if !all.Match(name) {
			t.Fatalf("** does not match %q", name)
		}
		// "**" segments: p/** is p or below; **/p is p at any depth.
		if !strings.Contains(pattern, "**") {
			deep, _ := ParseGlob("**/" + strings.TrimSuffix(pattern, "/"))
			if g.matchExact(name) && !deep.matchExact("x/y/"+name) {
				t.Fatalf("**/%s does not match x/y/%s", pattern, name)
			}
		}
	})
}
