package crash

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/e2e"
	"github.com/runner-cli/runner/internal/state"
)

// TestHostileAgents runs `runner run --once` against agents that misbehave
// and checks that the runner regains control within the agent timeout
// plus the grace period plus a margin, records the right outcome, and
// leaves no process of the agent's group behind.
func TestHostileAgents(t *testing.T) {
	const (
		short  = 2 * time.Second  // the timeout where the agent is to be stopped by it
		long   = 60 * time.Second // the timeout where the agent finishes by itself
		grace  = time.Second
		margin = 10 * time.Second // process start-up and recording, on a loaded machine
	)
	bigGoal := strings.Repeat("Read this long goal to the end. ", (1<<20)/32+1) // over 1 MiB
	tests := []struct {
		name     string
		timeout  time.Duration
		script   string
		extra    string // more [executor] lines
		codex    bool   // the fake plays codex under preset "codex"
		treeGoal string
		outcome  string
		class    string
		check    func(t *testing.T, r *e2e.Repo, res e2e.RunnerResult)
	}{
		{
			name:    "ignores SIGTERM and sleeps past the timeout",
			timeout: short,
			script:  `{"default": {"ignore_term": true, "stdout": "ready\n", "sleep": "60s", "message": {"status": "done", "summary": "late"}}}`,
			outcome: state.OutcomeExecutorError, class: "timeout",
		},
		{
			name:    "sleeps past the timeout",
			timeout: short,
			script:  `{"default": {"stdout": "ready\n", "sleep": "60s", "message": {"status": "done", "summary": "late"}}}`,
			outcome: state.OutcomeExecutorError, class: "timeout",
		},
		{
			name:    "backgrounds a grandchild holding stdout",
			timeout: long,
			script:  `{"default": {"grandchild": {"sleep": "60s", "pid_file": "gc.pid"}, "message": {"status": "done", "summary": "left a sleeper"}}}`,
			outcome: state.OutcomeDone, class: "ok",
			check: func(t *testing.T, r *e2e.Repo, res e2e.RunnerResult) {
				// The agent itself exits at once: only the grandchild's
				// SIGTERM and a little start-up may be waited for.
				if res.Took > grace+margin {
					t.Errorf("took %s for an agent that exits at once", res.Took)
				}
			},
		},
		{
			name:    "prints 200 MiB",
			timeout: long,
			script:  `{"default": {"filler": 209715200, "message": {"status": "done", "summary": "printed a lot"}}}`,
			extra:   `output_limit = "1MiB"`,
			outcome: state.OutcomeDone, class: "ok",
			check: func(t *testing.T, r *e2e.Repo, res e2e.RunnerResult) {
				log := filepath.Join(r.Paths.RunDir(1), "executor.log")
				st, err := os.Stat(log)
				if err != nil || st.Size() > 1<<20 {
					t.Errorf("executor.log: %v, %v; want at most 1 MiB", st, err)
				}
				m := regexp.MustCompile(`\[runner: (\d+) bytes of output cut here\]`).FindStringSubmatch(e2e.ReadFile(t, log))
				if m == nil {
					t.Errorf("executor.log has no cut marker")
				} else if cut, _ := strconv.Atoi(m[1]); cut < 199<<20 {
					t.Errorf("executor.log's cut marker says %d bytes; the agent printed 200 MiB", cut)
				}
				ru, ok := res.State.SysUsage().(*syscall.Rusage)
				if !ok {
					return
				}
				// ru_maxrss (KiB) of the runner, or of its largest child.
				rss := ru.Maxrss << 10
				t.Logf("peak resident memory while the agent printed 200 MiB: %d MiB", rss>>20)
				if rss > 100<<20 {
					t.Errorf("peak resident memory %d MiB; the runner must not hold the output", rss>>20)
				}
			},
		},
		{
			name:    "prints 200 MiB of codex events",
			timeout: long,
			script: `{"default": {"json_filler": 209715200, "usage": {"input_tokens": 12000, "output_tokens": 900},
				"message": {"status": "done", "summary": "printed a lot"}}}`,
			extra: `output_limit = "1MiB"`,
			codex: true, outcome: state.OutcomeDone, class: "ok",
			check: func(t *testing.T, r *e2e.Repo, res e2e.RunnerResult) {
				entries, err := os.ReadDir(r.Paths.RunDir(1))
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries {
					if info, err := e.Info(); err != nil || info.Size() > 1<<20 {
						t.Errorf("runs/000001/%s: %v, %v; want at most 1 MiB", e.Name(), info, err)
					}
				}
				m, err := state.LoadMeta(r.Paths.RunDir(1))
				if err != nil || m.Usage == nil || m.Usage.InputTokens != 12000 {
					t.Errorf("usage %+v (%v); want the last turn.completed's", m.Usage, err)
				}
				if ru, ok := res.State.SysUsage().(*syscall.Rusage); ok {
					rss := ru.Maxrss << 10
					t.Logf("peak resident memory while the agent printed 200 MiB of events: %d MiB", rss>>20)
					if rss > 100<<20 {
						t.Errorf("peak resident memory %d MiB; the runner must not hold the output", rss>>20)
					}
				}
			},
		},
		{
			name:     "reads a 1 MiB prompt only after printing",
			timeout:  long,
			script:   `{"default": {"stdin": "last", "filler": 2097152, "save_prompt": "prompt.seen", "message": {"status": "done", "summary": "read it"}}}`,
			treeGoal: bigGoal,
			outcome:  state.OutcomeDone, class: "ok",
			check: func(t *testing.T, r *e2e.Repo, res e2e.RunnerResult) {
				sent := e2e.ReadFile(t, filepath.Join(r.Paths.RunDir(1), "prompt.md"))
				seen := e2e.ReadFile(t, filepath.Join(r.Root, "prompt.seen"))
				if len(sent) < 1<<20 || seen != sent {
					t.Errorf("the agent read %d bytes of the %d-byte prompt", len(seen), len(sent))
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			treeJSON := e2e.OneTask
			config := fmt.Sprintf("timeout = %q\nkill_grace = %q\n%s", tt.timeout, grace, tt.extra)
			if tt.treeGoal != "" {
				goal, _ := json.Marshal(tt.treeGoal)
				treeJSON = `{"version": 1, "root": {"id": "job", "title": "Job", "children": [{"id": "only", "title": "The only task", "goal": ` + string(goal) + `}]}}`
			}
			r := e2e.FakeAgentRepo(t, treeJSON, tt.script, config)
			if tt.codex {
				r.Write(".runner/config.toml", fmt.Sprintf(`[executor]
preset = "codex"
bin = "fakeagent"
env = { FAKEAGENT_MODE = "codex", FAKEAGENT_SCRIPT = %s, %s = %s }
%s
`, e2e.TomlString(filepath.Join(r.Root, "agent.json")), e2e.CrashTokenEnv, e2e.TomlString(r.Token), config))
			}
			if tt.treeGoal != "" {
				appendConfig(t, r, "\n[prompt]\nbudget = \"4MiB\"\n")
			}
			res := r.RunRunner(2*time.Minute, 0, nil, "run", "--once")
			t.Logf("the runner took %s", res.Took)
			if res.Code != 0 {
				t.Fatalf("exit %d, want 0:\n%s", res.Code, res.Out)
			}
			if bound := tt.timeout + grace + margin; res.Took > bound {
				t.Errorf("the runner took %s; want control back within %s", res.Took, bound)
			}
			m, err := state.LoadMeta(r.Paths.RunDir(1))
			if err != nil {
				t.Fatal(err)
			}
			if m.Outcome != tt.outcome || m.Agent == nil || m.Agent.Class != tt.class {
				t.Errorf("outcome %s, agent %+v; want %s, class %s", m.Outcome, m.Agent, tt.outcome, tt.class)
			}
			if left := r.WaitNoAgents(10 * time.Second); len(left) > 0 {
				t.Errorf("processes of the agent's group survived: %v", left)
			}
			if tt.check != nil {
				tt.check(t, r, res)
			}
		})
	}
}

func appendConfig(t *testing.T, r *e2e.Repo, text string) {
	t.Helper()
	f, err := os.OpenFile(r.Paths.Config(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}
