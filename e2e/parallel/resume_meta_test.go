package parallel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/e2e"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/state"
)

// TestInterruptedKeepsSlotAndExecutor: a runner killed while its agents
// work leaves no meta.json; the next runner rebuilds it from the in-flight
// marker, and the rebuilt record keeps the slot the iteration worked in,
// the executor it ran on and the prompt it sent (runner show, the usage
// per executor), not zeros and an executor named "".
func TestInterruptedKeepsSlotAndExecutor(t *testing.T) {
	const slots = 2
	r := e2e.NewRepo(t, e2e.FlatTree("par", 2, 0), fmt.Sprintf("parallel = %d\n", slots)+e2e.TaskGuard,
		fmt.Sprintf("%s = \"%d\"", e2e.CrashSlotsEnv, slots), e2e.CrashSlowEnv+` = "400"`)
	r.Git("init", "-q", "-b", "main")
	r.Write("README", "the project\n")
	r.Git("add", "-A")
	r.Git("-c", "user.name=Person", "-c", "user.email=p@example.com", "commit", "-qm", "the project")
	config, err := os.ReadFile(filepath.Join(r.Root, ".runner/config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	r.Write(".runner/config.toml", strings.Replace(string(config), "[executor]\n", "[executor]\nname = \"primary\"\n", 1))

	// Killed once both agents started: each start writes run_state.json.
	res := r.RunRunner(e2e.RunLimit, 0, []string{fsutil.FailpointEnv + "=rename:run_state.json@2"}, "run")
	if !res.Killed {
		t.Fatalf("the runner was not killed at the second start: exit %d\n%s", res.Code, res.Out)
	}
	if res := r.RunRunner(e2e.RunLimit, 0, nil, "run"); res.Code != 0 {
		t.Fatalf("the runner after the kill: %s", r.WhyExited(res, 0))
	}
	s := r.CheckState("after the resume")
	interrupted := 0
	for n, m := range s.Metas {
		if m == nil || m.Outcome != state.OutcomeInterrupted {
			continue
		}
		interrupted++
		if m.Slot < 1 || m.Slot > slots {
			t.Errorf("interrupted iteration %d: slot %d, want 1 to %d", n, m.Slot, slots)
		}
		if m.Executor != "primary" {
			t.Errorf("interrupted iteration %d: executor %q, want primary", n, m.Executor)
		}
		if m.Prompt.Bytes == 0 || m.Prompt.Budget == 0 {
			t.Errorf("interrupted iteration %d: prompt %+v, want what context.json says", n, m.Prompt)
		}
	}
	if interrupted == 0 {
		t.Fatalf("no iteration was recorded as interrupted:\n%s", res.Out)
	}
	rs, err := state.LoadRunState(r.Paths.RunState())
	if err != nil {
		t.Fatal(err)
	}
	for name := range rs.UsageByExecutor {
		if name != "primary" {
			t.Errorf("usage booked to an executor named %q: %+v", name, rs.UsageByExecutor)
		}
	}
}
