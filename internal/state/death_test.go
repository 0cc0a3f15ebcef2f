package state

import "testing"

// TestDeath: an interruption by a runner's death spends an attempt only
// when the task was also at work at the runner's previous death; noting
// the same interruption again gives the same answer.
func TestDeath(t *testing.T) {
	var s RunState
	steps := []struct {
		pid     int
		life    string
		node    string
		charged bool
	}{
		{100, "x", "a", false}, // the first death spares everyone
		{100, "x", "b", false},
		{100, "x", "a", false}, // noted again (a runner died while recording it)
		{200, "y", "a", true},  // a was at work at the death before
		{200, "y", "c", false},
		{200, "y", "a", true},  // again: the same answer
		{300, "z", "b", false}, // b was at work two deaths ago, not at the last
		{300, "z", "c", true},
		// The same pid in another life (a runner started again in a
		// container is pid 1 each time): another death.
		{300, "w", "b", true}, // b was at work at z's death
		{300, "w", "b", true},
		{300, "v", "a", false},
	}
	for i, st := range steps {
		if got := s.Death(st.pid, st.life, st.node); got != st.charged {
			t.Errorf("step %d: Death(%d, %s, %s) = %v, want %v (deaths %+v)", i, st.pid, st.life, st.node, got, st.charged, s.Deaths)
		}
	}
	if len(s.Deaths) != 2 || s.Deaths[0].Life != "w" || s.Deaths[1].Life != "v" {
		t.Errorf("deaths kept: %+v, want the last two", s.Deaths)
	}
}

// TestLife: a process has one life, long enough not to come back.
func TestLife(t *testing.T) {
	if a, b := Life(), Life(); a != b || len(a) != 16 {
		t.Errorf("Life() = %q then %q; want the same 16 characters", a, b)
	}
}
