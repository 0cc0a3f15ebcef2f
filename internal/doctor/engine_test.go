package doctor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/engine"
	"github.com/runner-cli/runner/internal/sandbox"
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
	// The rooms as this machine would build them: in namespaces, or of
	// Landlock alone.
	sealed := &sandbox.Layers{Landlock: 7, Namespaces: sandbox.NamespacesUser, ProcessLimit: "cgroup v2 pids.max"}
	landlockOnly := &sandbox.Layers{Landlock: 7, NoNamespaces: "left out by RUNNER_SANDBOX_WITHOUT", ProcessLimit: "cgroup v2 pids.max"}
	for _, c := range []struct {
		name   string
		probe  Engine
		want   []string
		layers *sandbox.Layers // nil: no Landlock, nothing confined
		config string          // more of the config
	}{
		{"two workers", Engine{Workers: []EngineWorker{{Name: "w2", LastPoll: now.Add(-time.Second)}, {Name: "w1", LastPoll: now.Add(-3 * time.Second)}}},
			[]string{"  engine:   temporal temporal.example:7233 (namespace default), task queue runner\n",
				"  workers:  w2 (polled 1s ago), w1 (polled 3s ago)\n",
				"  remote:   /shared/repo.git: git reaches it\n",
				"  parallel: 6 iterations in flight at once on the workers (engine.parallel)\n"}, nil, ""},
		{"no worker", Engine{},
			[]string{"  workers:  none polling the task queue: start `runner worker --address temporal.example:7233 --task-queue runner`"}, nil, ""},
		{"no service", Engine{Error: "the Temporal service at temporal.example:7233: connection refused"},
			[]string{"  engine:   temporal temporal.example:7233 (namespace default), task queue runner: CANNOT BE REACHED: the Temporal service at temporal.example:7233: connection refused\n",
				"  workers:  unknown\n"}, nil, ""},
		{"no remote", Engine{RemoteError: "reach /shared/repo.git: fatal: not a git repository"},
			[]string{"  remote:   /shared/repo.git: CANNOT BE REACHED: reach /shared/repo.git: fatal: not a git repository\n"}, nil, ""},
		{"no key", Engine{},
			[]string{"  key:      NOT SET (engine.key_file, or RUNNER_ENGINE_KEY_FILE): the engine is not protected"}, nil, ""},
		{"a key, challenged", Engine{KeyFile: "/etc/runner/engine.key",
			Workers: []EngineWorker{{Name: "w1", LastPoll: now.Add(-time.Second), Key: KeySame}, {Name: "w2", LastPoll: now.Add(-2 * time.Second), Key: KeyOther},
				{Name: "w3", LastPoll: now.Add(-3 * time.Second), Key: KeyNoAnswer, KeyError: "it did not answer the challenge"}}},
			[]string{"  key:      /etc/runner/engine.key: set; NOT HIDDEN from the agents: the rooms have no mount namespace of their own (left out by RUNNER_SANDBOX_WITHOUT): " +
				"Landlock lets them read every file, this one included, so the engine is not protected from them\n",
				"  workers:  w1 (polled 1s ago, same key), w2 (polled 2s ago, ANOTHER KEY: give it this machine's key file), w3 (polled 3s ago, did not prove its key: it did not answer the challenge)\n"},
			landlockOnly, ""},
		{"a key hidden", Engine{KeyFile: "/etc/runner/engine.key"},
			[]string{"  key:      /etc/runner/engine.key: set, hidden from the agents' rooms\n"}, sealed, ""},
		{"a key, the sandbox off", Engine{KeyFile: "/etc/runner/engine.key"},
			[]string{"  key:      /etc/runner/engine.key: set; NOT HIDDEN from the agents: the agents, guards and reviewer here would not be confined (sandbox: off → not confined, by choice"},
			sealed, "[sandbox]\nmode = \"off\"\n"},
		{"a key, no Landlock", Engine{KeyFile: "/etc/runner/engine.key"},
			[]string{"  key:      /etc/runner/engine.key: set; NOT HIDDEN from the agents: the agents, guards and reviewer here would not be confined"}, nil, ""},
		{"a key unusable", Engine{KeyFile: "/k", KeyError: "the engine key file /k holds 3 bytes"},
			[]string{"  key:      CANNOT BE USED: the engine key file /k holds 3 bytes\n"}, nil, ""},
	} {
		p := probes(0, nil)
		if c.layers != nil {
			p = probes(7, nil)
			p.Room = func(int) sandbox.Layers { return *c.layers }
		}
		p.Engine = func(_ context.Context, e config.Engine, _ string, _ time.Duration) *Engine {
			got := c.probe
			got.Address, got.Namespace, got.TaskQueue, got.Remote = e.Address, e.Namespace, e.TaskQueue, e.Remote
			return &got
		}
		r := Gather(context.Background(), p, input(t, engineConfig+c.config))
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

// The key doctor reads is this machine's: RUNNER_ENGINE_KEY_FILE wins
// over engine.key_file, and an unusable one says why.
func TestProbeEngineKey(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(engine.KeyEnv, short)
	e := &Engine{}
	if key := e.readKey(config.Engine{KeyFile: "/elsewhere"}, dir+"/repo"); key != nil || e.KeyFile != short || !strings.Contains(e.KeyError, "fewer than 32") {
		t.Errorf("a short key: %+v", e)
	}
	t.Setenv(engine.KeyEnv, "")
	e = &Engine{}
	if key := e.readKey(config.Engine{}, dir); key != nil || e.KeyFile != "" || e.KeyError != "" {
		t.Errorf("no key: %+v", e)
	}
}
