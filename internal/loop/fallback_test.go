package loop

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

// chainRepo makes a repository whose executors are two shell agents,
// "primary" ([executor]) and "backup" ([[fallback]]), each counting its
// own runs (countingAgent, in the files runs and runs-backup), with the
// extra [loop] lines.
func chainRepo(t *testing.T, primary, backup, loopConf string) state.Paths {
	t.Helper()
	p := agentRepo(t, primary, loopConf)
	cmd, _ := json.Marshal([]string{"sh", "-c", strings.Replace(backup, "runs", "runs-backup", 2)})
	conf, err := os.ReadFile(p.Config())
	if err != nil {
		t.Fatal(err)
	}
	conf = []byte(strings.Replace(string(conf), "[executor]\n", "[executor]\nname = \"primary\"\n", 1))
	conf = []byte(strings.Replace(string(conf), "\n[loop]\n",
		"\n[[fallback]]\nname = \"backup\"\npreset = \"command\"\ncommand = "+string(cmd)+"\ntimeout = \"1m\"\nkill_grace = \"1s\"\n\n[loop]\n", 1))
	if err := os.WriteFile(p.Config(), conf, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(p.Config()); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFailingExecutorIsSetAside: an executor whose agent fails
// loop.max_consecutive_errors times in a row is set aside for the rest of
// the run (those failures spent attempts: the agent ran), and the run
// goes on with the next one instead of stopping.
func TestFailingExecutorIsSetAside(t *testing.T) {
	p := chainRepo(t, countingAgent(`*) echo "Error: the model server closed the stream." >&2; exit 1;;`),
		countingAgent(`*) `+doneMessage+`;;`), "max_attempts = 5\nmax_consecutive_errors = 2\n")
	var progress syncBuffer
	res, err := runBounded(t, context.Background(), p, &progress)
	mustComplete(t, res, err)
	for n, want := range map[int]string{1: "primary", 2: "primary", 3: "backup", 4: "backup", 5: "backup"} {
		if m := loadMeta(t, p, n); m.Executor != want {
			t.Errorf("iteration %d ran on %q, want %q", n, m.Executor, want)
		}
	}
	if a := nodeOf(t, p, "a"); a.Attempts != 2 || a.Status != tree.StatusDone {
		t.Errorf("task a: %s with %d attempts, want done after 2", a.Status, a.Attempts)
	}
	rs := loadRunState(t, p)
	if len(rs.SetAside) != 1 || rs.SetAside[0].Name != "primary" || !strings.Contains(rs.SetAside[0].Reason, "failed 2 times in a row") {
		t.Errorf("run state sets aside %+v, want primary, failed 2 times", rs.SetAside)
	}
	if rs.Executor != "backup" || rs.ExecutorErrors["primary"] != 2 || rs.ExecutorErrors["backup"] != 0 {
		t.Errorf("run state: executor %q, errors %v", rs.Executor, rs.ExecutorErrors)
	}
	if got := events(t, p, state.EventExecutorSetAside); len(got) != 1 || got[0].Executor != "primary" {
		t.Errorf("set-aside records %+v", got)
	}
}

// TestEveryExecutorLimited: when the fallback is limited too, the runner
// waits for the executor whose limit is over first, and the next
// iteration runs on it; no attempt is spent on any of it.
func TestEveryExecutorLimited(t *testing.T) {
	setClock(t, time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)) // limits end only by waiting them out
	limited := `echo "429 Too Many Requests" >&2; exit 1;;`
	p := chainRepo(t, countingAgent(`1) `+limited+`
*) `+doneMessage+`;;`), countingAgent(`1) `+limited+`
*) `+doneMessage+`;;`), "rate_limit_backoff = \"50ms\"\nrate_limit_backoff_max = \"50ms\"\n")
	var progress syncBuffer
	res, err := runBounded(t, context.Background(), p, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != Complete || res.Iterations != 3 {
		t.Fatalf("run ended with %v after %d iterations: %s", res.Reason, res.Iterations, res.Message)
	}
	out := progress.String()
	for _, want := range []string{
		"#1 app/a                    agent: rate_limited primary is limited until",
		"#2 app/a                    agent: rate_limited waiting 50ms (until",
		"before running primary, no attempt spent",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("progress lacks %q:\n%s", want, out)
		}
	}
	for n, want := range map[int]string{1: "primary", 2: "backup", 3: "primary", 4: "primary", 5: "primary"} {
		if m := loadMeta(t, p, n); m.Executor != want {
			t.Errorf("iteration %d ran on %q, want %q", n, m.Executor, want)
		}
	}
	if m := loadMeta(t, p, 2); m.Phase != state.PhaseAborted || !strings.Contains(m.Note, "the next iteration runs on primary") {
		t.Errorf("iteration 2: phase %s, note %q", m.Phase, m.Note)
	}
	for _, id := range []string{"a", "b", "c"} {
		if n := nodeOf(t, p, id); n.Attempts != 0 || n.Status != tree.StatusDone {
			t.Errorf("task %s: %s with %d attempts, want done with none", id, n.Status, n.Attempts)
		}
	}
}

// TestChainSync: executors keep what the run knows of them by name when
// the config is read again; a removed one is forgotten.
func TestChainSync(t *testing.T) {
	var c chain
	a, b := config.Executor{Name: "a", Preset: "codex"}, config.Executor{Name: "b", Preset: "claude"}
	c.sync([]config.Executor{a, b})
	now := time.Now()
	c.links[1].aside = "broken"
	c.links[0].Until = now.Add(time.Hour)
	if c.pick(now) != nil {
		t.Fatal("picked an executor although a is limited and b set aside")
	}
	c.sync([]config.Executor{b, a, {Name: "c", Preset: "codex"}})
	if c.links[0].aside != "broken" || !c.links[1].Until.Equal(now.Add(time.Hour)) || c.left() != 2 {
		t.Fatalf("state not kept by name: %+v %+v", c.links[0], c.links[1])
	}
	if s := c.pick(now); s == nil || s.name() != "c" {
		t.Fatalf("pick = %v, want c", s)
	}
	if e := c.earliest(); e == nil || e.name() != "c" {
		t.Fatalf("earliest = %v, want c (not limited)", e)
	}
	setAside, limited := c.notes(now)
	if len(setAside) != 1 || setAside[0].Name != "b" || len(limited) != 1 || limited[0].Name != "a" || limited[0].Until == nil {
		t.Fatalf("notes: %+v %+v", setAside, limited)
	}
}
