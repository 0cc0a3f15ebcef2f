package doctor

import (
	"context"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/config"
)

// TestAskExecutors runs each configured agent once: one that answers,
// one that is not logged in, one that never answers within its timeout,
// and the reviewer; each is told apart, with what to do.
func TestAskExecutors(t *testing.T) {
	cfg, err := config.Parse("config.toml", []byte(`[executor]
name = "good"
preset = "command"
command = ["sh", "-c", "cat >/dev/null; echo '{\"status\":\"done\",\"summary\":\"ok\"}' > \"$RUNNER_OUTPUT_FILE\""]

[[fallback]]
name = "nologin"
preset = "command"
command = ["sh", "-c", "echo 'Error: Not logged in. Please run /login' >&2; exit 1"]

[[fallback]]
name = "silent"
preset = "command"
command = ["sleep", "30"]
timeout = "1s"
kill_grace = "100ms"

[review]
name = "reviewer"
preset = "command"
command = ["sh", "-c", "echo '{\"status\":\"done\",\"summary\":\"ok\"}' > \"$RUNNER_OUTPUT_FILE\""]
`))
	if err != nil {
		t.Fatal(err)
	}
	got := AskExecutors(context.Background(), cfg)
	if len(got) != 4 {
		t.Fatalf("%d answers: %+v", len(got), got)
	}
	want := []struct {
		name, usedBy string
		ok           bool
		detail, hint string
	}{
		{"good", "executor", true, "answered in ", ""},
		{"nologin", "fallback 1", false, "stderr: Error: Not logged in. Please run /login", "give the agent valid credentials"},
		{"silent", "fallback 2", false, "no answer within 1s", "check the network"},
		{"reviewer", "review", true, "answered in ", ""},
	}
	for i, w := range want {
		a := got[i]
		if a.Executor != w.name || a.UsedBy != w.usedBy || a.OK != w.ok || !strings.HasPrefix(a.Detail, w.detail) || !strings.HasPrefix(a.Hint, w.hint) {
			t.Errorf("answer %d = %+v; want %+v", i, a, w)
		}
	}
	if AllAnswered(got) || !AllAnswered(got[:1]) {
		t.Error("AllAnswered")
	}
	var b strings.Builder
	if err := WriteAnswers(&b, got); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"answers:    good (executor): answered in ", "            nologin (fallback 1): does NOT answer: stderr: Error: Not logged in.",
		"              to go on: give the agent valid credentials"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("text lacks %q:\n%s", line, b.String())
		}
	}
}
