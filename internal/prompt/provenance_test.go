package prompt

import (
	"testing"
	"time"
)

func TestInjectionID(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 20; i++ { // 24 random bits: a repeat among 20 is a 1-in-80,000 event
		id := InjectionID(fixedTime)
		if len(id) != len("INJ-20261122-071500-a1b2c3") || id[:20] != "INJ-20261122-071500-" {
			t.Fatalf("bad injection id %q", id)
		}
		if seen[id] {
			t.Fatalf("injection id %q repeated", id)
		}
		seen[id] = true
	}
}

var fixedTime = mustTime("2026-11-22T07:15:00Z")

func mustTime(s string) (t time.Time) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}
