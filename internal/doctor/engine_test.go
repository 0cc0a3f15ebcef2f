package doctor

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/config"
)

const engineConfig = `
[executor]
preset = "command"
command = ["no-such-agent-xyz"]

[engine]
address = "temporal.example:7233"
remote = "/shared/repo.git"
parallel = 6
`

// With [engine], doctor says whether the service answers, which workers
// poll its task queue and whether git reaches the remote; the agents'
// programs and CPUs are the workers', so a program missing here is no
// notice.
func TestDoctorEngine(t *testing.T) {
	bin(t, map[string]string{"git": gitOK})
	now := time.Now()
	for _, c := range []struct {
		name  string
		probe Engine
		want  []string
	}{
		{"two workers", Engine{Workers: []EngineWorker{{Name: "w2", LastPoll: now.Add(-time.Second)}, {Name: "w1", LastPoll: now.Add(-3 * time.Second)}}},
			[]string{"  engine:   temporal temporal.example:7233 (namespace default), task queue runner\n",
				"  workers:  w2 (polled 1s ago), w1 (polled 3s ago)\n",
				"  remote:   /shared/repo.git: git reaches it\n",
				"  parallel: 6 iterations in flight at once on the workers (engine.parallel)\n"}},
		{"no worker", Engine{},
			[]string{"  workers:  none polling the task queue: start `runner worker --address temporal.example:7233 --task-queue runner`"}},
		{"no service", Engine{Error: "the Temporal service at temporal.example:7233: connection refused"},
			[]string{"  engine:   temporal temporal.example:7233 (namespace default), task queue runner: CANNOT BE REACHED: the Temporal service at temporal.example:7233: connection refused\n",
				"  workers:  unknown\n"}},
		{"no remote", Engine{RemoteError: "reach /shared/repo.git: fatal: not a git repository"},
			[]string{"  remote:   /shared/repo.git: CANNOT BE REACHED: reach /shared/repo.git: fatal: not a git repository\n"}},
	} {
		p := probes(0, nil)
		p.Engine = func(_ context.Context, e config.Engine, _ string, _ time.Duration) *Engine {
			got := c.probe
			got.Address, got.Namespace, got.TaskQueue, got.Remote = e.Address, e.Namespace, e.TaskQueue, e.Remote
			return &got
		}
		r := Gather(context.Background(), p, input(t, engineConfig))
		var text bytes.Buffer
		WriteText(&text, r)
		for _, w := range c.want {
			if !strings.Contains(text.String(), w) {
				t.Errorf("%s: no %q in\n%s", c.name, w, text.String())
			}
		}
		if strings.Contains(text.String(), "no-such-agent-xyz is") {
			t.Errorf("%s: a notice of the workers' agent program:\n%s", c.name, text.String())
		}
	}
}

// The real probe, without a service or a repository: both say why.
func TestProbeEngineUnreachable(t *testing.T) {
	e := probeEngine(context.Background(), config.Engine{Address: "127.0.0.1:1", Namespace: "default", TaskQueue: "runner", Remote: "/no/such/remote.git"},
		t.TempDir(), 5*time.Second)
	if !strings.Contains(e.Error, "127.0.0.1:1") || e.RemoteError == "" || len(e.Workers) > 0 {
		t.Errorf("probe: %+v", e)
	}
}
