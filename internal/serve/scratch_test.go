package serve_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/cli"
	"github.com/runner-cli/runner/internal/fakeagent"
)

// TestMain lets the test binary play `runner` and `fakeagent`, chosen by
// the name it is started under (links made by tools), as cmd/runner's
// scripts do: the scratch run is the real command line driving a
// scripted agent. The runner's supervisor starts the same binary under
// the runner's name.
func TestMain(m *testing.M) {
	switch filepath.Base(os.Args[0]) {
	case "runner":
		os.Exit(cli.Main())
	case "fakeagent":
		os.Exit(fakeagent.Main())
	case "claude":
		os.Exit(fakeagent.MainAs(fakeagent.ModeClaude))
	}
	os.Exit(m.Run())
}

// tools makes a folder with `runner` and a fake `claude`, both this test
// binary.
func tools(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, name := range []string{"runner", "claude"} {
		if err := os.Symlink(exe, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The scratch run: a web shop whose catalog is done at once, whose cart
// passes its guard at the second attempt, whose payments the agent is
// blocked on (with markup in its question), and whose emails wait for
// the payments.
const (
	scratchConfig = `[executor]
preset = "claude"
env = { FAKEAGENT_SCRIPT = "agent.json" }
timeout = "1m"

[[guard]]
name = "cart"
run = "if test ! -f cart.txt || grep -qx ok cart.txt; then echo 'ok 1 - cart'; else echo 'not ok 1 - cart # cart.txt must say ok'; echo 'cart.txt must say ok' >&2; st=1; fi; echo 1..1; exit $st"
report = "tap"

[loop]
on_blocked = "continue"
escalate = ["claude"]
max_tokens = 100000000
`
	scratchTree = `{"version": 1, "root": {"id": "shop", "title": "Web shop", "children": [
  {"id": "catalog", "title": "Catalog page", "goal": "List the products.", "checks": [{"name": "catalog-tap", "report": "tap",
    "run": "if grep -qx ok catalog.txt 2>/dev/null; then echo 'ok 1 - lists'; else echo 'not ok 1 - lists'; fi; echo 'ok 2 - loads'; echo 1..2"}]},
  {"id": "cart", "title": "Shopping cart", "goal": "Add and remove items."},
  {"id": "payments", "title": "Payments", "goal": "Take card payments."},
  {"id": "emails", "title": "Order emails", "goal": "Mail a receipt.", "depends_on": ["payments"]}
]}}
`
	question    = "Which payment provider should I integrate, Stripe or Adyen?"
	scratchPlan = `{"steps": [
  {"node": "catalog", "sleep": "150ms", "write": [{"path": "catalog.txt", "content": "ok\n"}],
   "commands": [{"command": "go test ./catalog/...", "output": "ok"}],
   "usage": {"input_tokens": 48200, "cached_input_tokens": 31000, "output_tokens": 2100, "cost_usd": 0.1842},
   "message": {"status": "done", "summary": "The catalog page lists the products."}},
  {"node": "cart", "attempt": 1, "sleep": "250ms", "write": [{"path": "cart.txt", "content": "almost\n"}],
   "usage": {"input_tokens": 61000, "cached_input_tokens": 40000, "output_tokens": 3900, "cost_usd": 0.2711},
   "message": {"status": "done", "summary": "Cart written."}},
  {"node": "cart", "attempt": 2, "sleep": "120ms", "write": [{"path": "cart.txt", "content": "ok\n"}],
   "usage": {"input_tokens": 39500, "cached_input_tokens": 30000, "output_tokens": 1200, "cost_usd": 0.0967},
   "message": {"status": "done", "summary": "Fixed the cart after the guard failed.", "assumptions": ["prices in euros"]}},
  {"node": "payments", "sleep": "80ms",
   "usage": {"input_tokens": 22000, "cached_input_tokens": 15000, "output_tokens": 700, "cost_usd": 0.0514},
   "message": {"status": "blocked", "summary": "The payment provider is not named anywhere.", "questions": ["` + question + ` <script>window.pwned=1</script>"]}}
]}
`
)

// scratchRun makes a repository and runs it to where it stops (the
// payments blocked, the emails waiting for them), with the real runner
// and the fake agent. It returns the repository and the tools folder.
func scratchRun(t *testing.T) (root, bin string) {
	t.Helper()
	bin = tools(t)
	root = filepath.Join(t.TempDir(), "webshop")
	writeFile(t, filepath.Join(root, ".runner", "config.toml"), scratchConfig)
	writeFile(t, filepath.Join(root, ".runner", "tree.json"), scratchTree)
	writeFile(t, filepath.Join(root, "agent.json"), scratchPlan)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "runner"), "--dir", root, "run")
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("runner run: %v (want exit 3: stuck on the blocked payments)\n%s", err, out)
	}
	return root, bin
}

var servingAt = regexp.MustCompile(`is at (http://\S+/)`)

// startServe starts `runner serve` on a free loopback port and returns
// its URL. It is interrupted when the test ends.
func startServe(t *testing.T, bin, root string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "runner"), append([]string{"--dir", root, "serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("runner serve after Ctrl-C: %v (want exit 0)", err)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("runner serve did not stop within 10s of Ctrl-C")
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := servingAt.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case url := <-found:
		return url
	case <-time.After(30 * time.Second):
		t.Fatal("runner serve did not say where it listens within 30s")
	}
	return ""
}
