package state

import "testing"

// TestDeath: an interruption by a runner's death spends an attempt only
// when the task was also at work at the runner's previous death; noting
// the same interruption again gives the same answer.
func TestDeath(t *testing.T) {
	var s RunState
	steps := []struct {
		pid     int
		node    string
		charged bool
	}{
		{100, "a", false}, // the first death spares everyone
		{100, "b", false},
		{100, "a", false}, // noted again (a runner died while recording it)
		{200, "a", true},  // a was at work at the death before
		{200, "c", false},
		{200, "a", true},  // again: the same answer
		{300, "b", false}, // b was at work two deaths ago, not at the last
		{300, "c", true},
	}
	for i, st := range steps {
		if got := s.Death(st.pid, st.node); got != st.charged {
			t.Errorf("step %d: Death(%d, %s) = %v, want %v (deaths %+v)", i, st.pid, st.node, got, st.charged, s.Deaths)
		}
	}
	if len(s.Deaths) != 2 || s.Deaths[0].RunnerPID != 200 || s.Deaths[1].RunnerPID != 300 {
		t.Errorf("deaths kept: %+v, want the last two", s.Deaths)
	}
}
