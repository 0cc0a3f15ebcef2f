package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"timeout", "timout", 1}, {"kitten", "sitting", 3}, {"héllo", "hello", 1}} {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	keys := []string{"timeout", "idle_timeout", "preset", "bin"}
	two := func(string) int { return 2 }
	if got := Closest("Timout", keys, two); got != "timeout" {
		t.Errorf("Closest(Timout) = %q", got)
	}
	if got := Closest("bim", keys, func(c string) int { return 0 }); got != "" {
		t.Errorf("a limit of 0 still suggested %q", got)
	}
	if got := Closest("zzzzzz", keys, two); got != "" {
		t.Errorf("nothing near: %q", got)
	}
}
