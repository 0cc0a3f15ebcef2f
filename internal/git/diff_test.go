package git

import (
	"fmt"
	"strings"
	"testing"
)

func TestDiffStatAndDiff(t *testing.T) {
	s := newScratch(t)
	base := s.git("rev-parse", "HEAD")
	var big strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&big, "line %d\n", i)
	}
	s.write("big.txt", big.String())
	s.write("README", "hello\nworld\n")
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "two files")
	c := s.git("rev-parse", "HEAD")

	stat, err := s.r.DiffStat(ctx, base, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"README  |    1 +", "big.txt | 2000 +", "2 files changed, 2001 insertions(+)", "create mode 100644 big.txt"} {
		if !strings.Contains(stat, want) {
			t.Errorf("DiffStat lacks %q:\n%s", want, stat)
		}
	}
	// What one commit changed.
	if one, err := s.r.DiffStat(ctx, "", c); err != nil || one != stat {
		t.Errorf("DiffStat of the commit alone = %q, %v; want\n%s", one, err, stat)
	}
	if root, err := s.r.DiffStat(ctx, "", base); err != nil || !strings.Contains(root, "README") {
		t.Errorf("DiffStat of the root commit = %q, %v", root, err)
	}

	full, cut, err := s.r.Diff(ctx, base, c, 0)
	if err != nil || cut || !strings.Contains(full, "+line 1999\n") {
		t.Errorf("Diff = %d bytes, cut %v, %v", len(full), cut, err)
	}
	part, cut, err := s.r.Diff(ctx, base, c, 1000)
	if err != nil || !cut || len(part) > 1000 || !strings.HasSuffix(part, "\n") || !strings.HasPrefix(full, part) {
		t.Errorf("Diff limited to 1000 bytes = %d bytes, cut %v, %v", len(part), cut, err)
	}
	if _, _, err := s.r.Diff(ctx, base, "no-such-rev", 0); err == nil {
		t.Error("Diff of a missing revision gave no error")
	}
}

func TestChangedPaths(t *testing.T) {
	s := newScratch(t)
	base := s.git("rev-parse", "HEAD^{tree}")
	s.write("src/a.go", "package a\n")
	s.write("README", "changed\n")
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "more")
	got, err := s.r.ChangedPaths(ctx, base, s.git("rev-parse", "HEAD"))
	if err != nil || strings.Join(got, ",") != "README,src/a.go" {
		t.Fatalf("ChangedPaths = %q, %v", got, err)
	}
	if none, err := s.r.ChangedPaths(ctx, base, base); err != nil || len(none) != 0 {
		t.Fatalf("ChangedPaths of one tree = %q, %v", none, err)
	}
}
