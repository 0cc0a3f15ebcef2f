package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	r := newCrashRepo(t, flatTree("par", 2, 0), fmt.Sprintf("parallel = %d\n", slots)+taskGuard,
		fmt.Sprintf("%s = \"%d\"", crashSlotsEnv, slots), crashSlowEnv+` = "400"`)
	r.git("init", "-q", "-b", "main")
	r.write("README", "the project\n")
	r.git("add", "-A")
	r.git("-c", "user.name=Person", "-c", "user.email=p@example.com", "commit", "-qm", "the project")
	config, err := os.ReadFile(filepath.Join(r.root, ".runner/config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	r.write(".runner/config.toml", strings.Replace(string(config), "[executor]\n", "[executor]\nname = \"primary\"\n", 1))

	// Killed once both agents started: each start writes run_state.json.
	res := r.runRunner(runLimit, 0, []string{fsutil.FailpointEnv + "=rename:run_state.json@2"}, "run")
	if !res.killed {
		t.Fatalf("the runner was not killed at the second start: exit %d\n%s", res.code, res.out)
	}
	if res := r.runRunner(runLimit, 0, nil, "run"); res.code != 0 {
		t.Fatalf("the runner after the kill: %s", r.whyExited(res, 0))
	}
	s := r.checkState("after the resume")
	interrupted := 0
	for n, m := range s.metas {
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
		t.Fatalf("no iteration was recorded as interrupted:\n%s", res.out)
	}
	rs, err := state.LoadRunState(r.p.RunState())
	if err != nil {
		t.Fatal(err)
	}
	for name := range rs.UsageByExecutor {
		if name != "primary" {
			t.Errorf("usage booked to an executor named %q: %+v", name, rs.UsageByExecutor)
		}
	}
}
