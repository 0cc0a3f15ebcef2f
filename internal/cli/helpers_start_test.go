package cli

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/proc"
	"github.com/runner-cli/runner/internal/sandbox"
)

// The packages of the engine, the command line and the loop that a
// helper must not wait for: each has an initializer, so that
// GODEBUG=inittrace=1 names it when it runs.
var notBeforeHelpers = []string{
	"go.temporal.io/api/workflowservice/v1", // the engine's API (protobuf registrations)
	"go.temporal.io/api/history/v1",
	"google.golang.org/grpc",
	"net/netip",
	"github.com/runner-cli/runner/internal/exec", // the executors' schema template
}

// helperProbeEnv is set for a test binary started to play a helper: one
// that gets past the initializers (the helper did not answer from them)
// stops there instead of running the tests again.
const helperProbeEnv = "RUNNER_CLI_TEST_HELPER_PROBE"

func TestMain(m *testing.M) {
	if os.Getenv(helperProbeEnv) == "1" {
		os.Stderr.WriteString("main: no helper answered from the initializers\n")
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// initialised runs this test binary (which links what the runner's binary
// links) with args and GODEBUG=inittrace=1, and returns the packages
// whose initializers ran, in order, the rest of what it printed on
// standard error, and its exit status.
func initialised(t *testing.T, args ...string) (pkgs []string, rest string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", helperProbeEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Run()
	var other strings.Builder
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 2 && f[0] == "init" && strings.HasPrefix(f[2], "@") {
			pkgs = append(pkgs, f[1])
			continue
		}
		other.WriteString(sc.Text() + "\n")
	}
	return pkgs, other.String(), cmd.ProcessState.ExitCode()
}

// The supervisor and the confinement helper, started for every agent and
// guard command, answer from the initializers of packages proc and
// sandbox, before the engine's packages and the rest of the binary are
// initialised.
func TestHelpersAnswerBeforeTheEngine(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the supervisor and the confinement helper are Linux's")
	}
	// Without its socket the supervisor says so and stops: what ran
	// before it is what every supervisor start pays.
	pkgs, out, code := initialised(t, proc.SuperviseArg)
	if code != 1 || !strings.Contains(out, "runner "+proc.SuperviseArg+": descriptor 3 is not the runner's socket") {
		t.Fatalf("the supervisor did not answer (exit status %d); it printed:\n%s", code, out)
	}
	checkNotBefore(t, proc.SuperviseArg, pkgs)

	if abi, err := sandbox.ABI(); abi < 1 {
		t.Skipf("no Landlock here for the confinement helper: %v", err)
	}
	room := sandbox.Room{Writable: []string{t.TempDir()}}
	pkgs, out, code = initialised(t, sandbox.Wrap("runner", room, []string{"/bin/true"})[1:]...)
	if code != 0 {
		t.Fatalf("the confinement helper did not run true (exit status %d); it printed:\n%s", code, out)
	}
	checkNotBefore(t, sandbox.ConfineArg, pkgs)
}

func checkNotBefore(t *testing.T, helper string, pkgs []string) {
	t.Helper()
	if len(pkgs) == 0 {
		t.Fatalf("%s: no package initializer traced (GODEBUG=inittrace=1)", helper)
	}
	for _, p := range notBeforeHelpers {
		for _, q := range pkgs {
			if q == p {
				t.Errorf("%s answered only after package %s was initialised (%d packages before it)", helper, p, len(pkgs))
			}
		}
	}
}
