package engine

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/git"
	"github.com/runner-cli/runner/internal/sandbox"
)

// TestWorkerSendsOpenings runs an iteration through the workflow on a
// real worker activity (the SDK's test environment): what its room left
// open, by the layers the worker's machine gives, goes back in the
// signed output (none where every layer stands), as does why an agent
// ran unconfined.
func TestWorkerSendsOpenings(t *testing.T) {
	confining(t)
	src, remote, checkpoint := checkpointRepo(t)

	landlockOnly := sandbox.Layers{Landlock: 7, NoNamespaces: "left out by RUNNER_SANDBOX_WITHOUT", ProcessLimit: "cgroup v2 pids.max"}
	sealed := sandbox.Layers{Landlock: 7, Namespaces: sandbox.NamespacesUser, ProcessLimit: "cgroup v2 pids.max"}
	agent := `[executor]
preset = "command"
command = ["sh", "-c", "echo '{\"status\": \"done\", \"summary\": \"did it\"}' > \"$RUNNER_OUTPUT_FILE\""]
`
	for i, c := range []struct {
		name       string
		layers     sandbox.Layers
		mode       string
		openings   []string
		unconfined string
	}{
		{"Landlock alone", landlockOnly, "auto", landlockOnly.Openings(), ""},
		{"every layer", sealed, "auto", nil, ""},
		{"unconfined", landlockOnly, "off", nil, `sandbox.mode = "off"`},
	} {
		n := i + 1
		ref := CheckpointRef("r", n, 0)
		gitIn(t, src, "push", "-q", remote, "HEAD:"+ref)
		w := &Worker{Dir: t.TempDir(), Name: "w", Key: testKey, Sandbox: FloorOff,
			Room: func(_ *config.Config, work, tmp string) *sandbox.Room {
				return &sandbox.Room{Writable: []string{work, tmp}}
			},
			Layers: func(int) sandbox.Layers { return c.layers }}
		var err error
		if w.repo, err = git.Init(t.Context(), filepath.Join(w.Dir, "repo"), git.Options{}); err != nil {
			t.Fatal(err)
		}
		in, err := testKey.SignInput(Input{Run: "r", Iteration: n, Node: "a", Attempt: 1, Remote: remote, Checkpoint: checkpoint,
			CheckpointRef: ref, ResultRef: ResultRef("r", n, 0), Executor: "command",
			Config: fmt.Appendf(nil, "[sandbox]\nmode = %q\n\n%s", c.mode, agent), Prompt: []byte("do it"), Schema: []byte("{}"),
			Timeout: time.Minute, Heartbeat: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		env := newEnv(t, w.runIteration)
		env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: WorkflowID("r", n, 0)})
		env.ExecuteWorkflow(Workflow, *in)
		if err := env.GetWorkflowError(); err != nil {
			t.Fatalf("%s: the iteration failed: %v", c.name, err)
		}
		var signed Signed
		if err := env.GetWorkflowResult(&signed); err != nil {
			t.Fatal(err)
		}
		out, err := testKey.OpenOutput(WorkflowID("r", n, 0), "a", 1, &signed)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if out.Agent == nil || out.Agent.Message == nil || out.Agent.Message.Status != "done" {
			t.Fatalf("%s: the agent did not run: %+v", c.name, out.Agent)
		}
		if !slices.Equal(out.Openings, c.openings) || out.Unconfined != c.unconfined {
			t.Errorf("%s: openings %q, unconfined %q; want %q, %q", c.name, out.Openings, out.Unconfined, c.openings, c.unconfined)
		}
		if len(c.openings) > 0 && !strings.Contains(strings.Join(out.Openings, "; "), "no namespaces: left out by RUNNER_SANDBOX_WITHOUT") {
			t.Errorf("%s: the openings do not say why: %q", c.name, out.Openings)
		}
	}
}
