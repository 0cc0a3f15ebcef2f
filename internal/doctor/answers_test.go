package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/engine"
	"github.com/runner-cli/runner/internal/proc"
)

// TestAskExecutors runs each configured agent once: one that answers,
// one that is not logged in, one that never answers within its timeout,
// and the reviewer; each is told apart, with what to do.
func TestAskExecutors(t *testing.T) {
	confining(t)
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

// TestAskConfined asks an agent that tries to write outside its folder
// and to read the engine key: the check runs it in the room a run gives
// it, so neither works, and it still answers.
func TestAskConfined(t *testing.T) {
	layers := proc.RoomLayers(0)
	if layers.Landlock < 1 {
		t.Skipf("no room on this machine: %s", layers.NoLandlock)
	}
	confining(t)
	dir := t.TempDir()
	outside, key := filepath.Join(dir, "outside"), filepath.Join(dir, "engine.key")
	if err := os.WriteFile(key, []byte("secret key of the coordinator 0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(engine.KeyEnv, key)
	script := `cat >/dev/null; echo escaped > ` + outside + `; `
	if layers.Namespaces != "" { // without them the room hides nothing from reads
		script += `if grep -q secret ` + key + `; then echo "read the key" >&2; exit 3; fi; `
	} else {
		t.Logf("no namespaces here (%s): the key is not hidden from reads", layers.NoNamespaces)
	}
	script += `echo '{"status":"done","summary":"ok"}' > "$RUNNER_OUTPUT_FILE"`
	cfg, err := config.Parse("config.toml", []byte("[executor]\nname = \"probe\"\npreset = \"command\"\ncommand = [\"sh\", \"-c\", "+strconv.Quote(script)+"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := AskExecutors(context.Background(), cfg)
	if len(got) != 1 || !got[0].OK {
		t.Fatalf("answers: %+v", got)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("the asked agent wrote outside its folder")
	}
}

// confining makes the test binary the helper that confines the agents a
// check asks (as the runner's binary does), until the test ends.
func confining(t *testing.T) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	proc.UseConfinement(exe)
	t.Cleanup(func() { proc.UseConfinement("") })
}
