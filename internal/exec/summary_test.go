package executor

import "testing"

// TestAllCommandsFailed: only a run whose every command with a known end
// failed counts; one success, or no command at all, does not.
func TestAllCommandsFailed(t *testing.T) {
	for _, tt := range []struct {
		exits []string
		want  bool
	}{
		{[]string{"exit 2", "failed", "declined", "failed or refused"}, true},
		{[]string{"exit 1", "exit 0"}, false},
		{[]string{"exit 1", "ok"}, false},
		{[]string{"exit 1", ""}, true},
		{[]string{""}, false},
		{nil, false},
	} {
		s := &EventSummary{}
		for _, e := range tt.exits {
			s.Commands = append(s.Commands, EventCommand{Command: "x", Exit: e})
		}
		if got := s.AllCommandsFailed(); got != tt.want {
			t.Errorf("exits %q: AllCommandsFailed = %v, want %v", tt.exits, got, tt.want)
		}
	}
	var none *EventSummary
	if none.AllCommandsFailed() {
		t.Error("no event file: AllCommandsFailed")
	}
}
