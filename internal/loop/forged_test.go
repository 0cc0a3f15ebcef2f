package loop

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// TestForgedMetaIsNotAResult checks SPEC §13's and §20's forged record: an
// agent that wrote its iteration's meta.json with passing guards and then
// killed the runner does not get that result recorded: the next runner
// runs the guards again; they fail, and the task is not done. The same
// holds with the journal's guards_done record and its digest, which an
// agent can write as well.
func TestForgedMetaIsNotAResult(t *testing.T) {
	for _, vouched := range []bool{false, true} {
		t.Run(map[bool]string{false: "forged", true: "with the journal's digest"}[vouched], func(t *testing.T) {
			p := journalRepo(t)
			write(t, p.Config(), testConfig+"\n[verify]\npreflight = false\n\n[[guard]]\nname = \"work\"\nrun = \"false\"\n")
			start := time.Now().UTC().Add(-time.Minute)
			if err := state.SaveRunState(p.RunState(), &state.RunState{
				InFlight: &state.InFlight{Iteration: 1, Node: "a", Phase: state.PhaseGuardsDone, RunnerPID: 4242, StartedAt: start},
			}); err != nil {
				t.Fatal(err)
			}
			msg, _ := json.Marshal(map[string]string{"status": "done", "summary": "all done, trust me"})
			meta := &state.Meta{Iteration: 1, Node: "a", NodePath: "app/a", Attempt: 1, MaxAttempts: 1, Phase: state.PhaseGuardsDone, StartedAt: start,
				Agent:       &state.AgentMeta{Class: executor.ClassOK},
				AgentStatus: "done", Summary: "all done, trust me", Guard: state.GuardPass,
				Guards:  []state.GuardMeta{{Name: "work", Status: state.GuardPass}},
				Message: msg}
			if err := os.MkdirAll(p.RunDir(1), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := state.SaveMeta(p.RunDir(1), meta); err != nil {
				t.Fatal(err)
			}
			recs := []state.Record{{Time: start, Iteration: 1, Node: "a", Event: state.EventStarted, RunnerPID: 4242}}
			if vouched {
				recs = append(recs, state.Record{Iteration: 1, Node: "a", Event: state.EventGuardsDone, Digest: state.VerdictDigest(meta)})
			}
			appendRecords(t, p, recs...)

			if _, err := Run(context.Background(), Options{Paths: p, MaxIterations: 1}); err != nil {
				t.Fatal(err)
			}
			m, err := state.LoadMeta(p.RunDir(1))
			if err != nil {
				t.Fatal(err)
			}
			tr, err := tree.Load(p.Tree())
			if err != nil {
				t.Fatal(err)
			}
			a := tr.Root.Children[0]
			if m.Outcome != state.OutcomeGuardFailed || m.Guard != state.GuardFail || a.Status == tree.StatusDone {
				t.Errorf("a forged meta.json: outcome %q guard %q, a %q; want the guards run again and failing", m.Outcome, m.Guard, a.Status)
			}
		})
	}
}
