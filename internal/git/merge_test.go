package git

import (
	"errors"
	"strings"
	"testing"
)

// Two branches that changed different files merge into a commit with
// both parents, ours first, holding both changes; one that holds the
// other already is ErrNoChange; the same lines changed on both sides are
// a *ConflictError that says it is a merge's.
func TestMerge(t *testing.T) {
	s := newScratch(t)
	base := s.git("rev-parse", "HEAD")
	ours := s.commitOn(base, map[string]string{"a.txt": "a\n"})
	theirs := s.commitOn(base, map[string]string{"b.txt": "b\n"})

	if ok, err := s.r.IsAncestor(ctx, base, ours); err != nil || !ok {
		t.Fatalf("IsAncestor(base, ours) = %v, %v; want true", ok, err)
	}
	if ok, err := s.r.IsAncestor(ctx, theirs, ours); err != nil || ok {
		t.Fatalf("IsAncestor(theirs, ours) = %v, %v; want false", ok, err)
	}
	if n, err := s.r.CountAhead(ctx, ours, theirs); err != nil || n != 1 {
		t.Fatalf("CountAhead = %d, %v; want 1", n, err)
	}

	m, err := s.r.Merge(ctx, ours, theirs, Message{Subject: "Merge main into runner/app"})
	if err != nil {
		t.Fatal(err)
	}
	if parents := s.git("rev-list", "--parents", "-n", "1", m); parents != m+" "+ours+" "+theirs {
		t.Errorf("parents of the merge = %q; want ours then theirs", parents)
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		if got := s.git("show", m+":"+f); got != strings.TrimSuffix(f, ".txt") {
			t.Errorf("%s in the merge = %q", f, got)
		}
	}
	if _, err := s.r.Merge(ctx, m, ours, Message{Subject: "again"}); !errors.Is(err, ErrNoChange) {
		t.Errorf("merging what is held already = %v; want ErrNoChange", err)
	}

	clash := s.commitOn(base, map[string]string{"a.txt": "not a\n"})
	_, err = s.r.Merge(ctx, ours, clash, Message{Subject: "Merge"})
	var ce *ConflictError
	if !errors.As(err, &ce) || !ce.Merge || len(ce.Files) != 1 || ce.Files[0] != "a.txt" {
		t.Fatalf("Merge of a clash = %v; want a merge's conflict in a.txt", err)
	}
	if !strings.HasPrefix(err.Error(), "merging ") || !strings.Contains(ce.Hunks, "<<<<<<<") {
		t.Errorf("conflict = %q, hunks %q", err, ce.Hunks)
	}
}
