package lazyregexp

import (
	"regexp"
	"slices"
	"sync"
	"testing"
)

func TestCompiledOnFirstUseOnly(t *testing.T) {
	r := New(`(a+)(b*)`)
	if !r.MatchString("xaab") || r.MatchString("xyz") {
		t.Fatal("MatchString")
	}
	if got := r.FindString("xaab"); got != "aab" {
		t.Errorf("FindString = %q", got)
	}
	if got := r.FindStringIndex("xaab"); !slices.Equal(got, []int{1, 4}) {
		t.Errorf("FindStringIndex = %v", got)
	}
	if got := r.FindStringSubmatch("xaab"); !slices.Equal(got, []string{"aab", "aa", "b"}) {
		t.Errorf("FindStringSubmatch = %q", got)
	}
	if got := r.FindSubmatch([]byte("ab")); len(got) != 3 || string(got[1]) != "a" {
		t.Errorf("FindSubmatch = %q", got)
	}
	if got := r.FindAllStringSubmatch("ab aab", -1); len(got) != 2 || got[1][1] != "aa" {
		t.Errorf("FindAllStringSubmatch = %q", got)
	}
	if r.String() != `(a+)(b*)` {
		t.Errorf("String = %q", r.String())
	}
	// One compilation, shared by every caller, also concurrent ones.
	var wg sync.WaitGroup
	seen := make([]*regexp.Regexp, 8)
	for i := range seen {
		wg.Go(func() { seen[i] = r.Regexp() })
	}
	wg.Wait()
	for _, re := range seen {
		if re != seen[0] {
			t.Fatal("compiled more than once")
		}
	}
}

func TestBadPatternPanicsOnFirstUse(t *testing.T) {
	r := New(`(`) // no panic here: nothing is compiled yet
	defer func() {
		if recover() == nil {
			t.Error("a pattern that does not compile did not panic on its first use")
		}
	}()
	r.MatchString("x")
}
