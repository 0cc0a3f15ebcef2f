package loop

import (
	"strings"
	"testing"
)

func TestCPUNotice(t *testing.T) {
	if msg := cpuNotice(2, 2); msg != "" {
		t.Errorf("2 slots on 2 CPUs: %q, want no notice", msg)
	}
	msg := cpuNotice(4, 2)
	for _, want := range []string{"loop.parallel = 4", "2 CPUs", "slower than with 2 slots"} {
		if !strings.Contains(msg, want) {
			t.Errorf("4 slots on 2 CPUs: notice %q lacks %q", msg, want)
		}
	}
}
