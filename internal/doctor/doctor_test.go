package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/git"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/sandbox"
)

// bin writes executable shell scripts into a new folder, which becomes
// the whole PATH, and returns the folder.
func bin(t *testing.T, scripts map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	return dir
}

// probes are fakes of the machine: Landlock answers abi and err, the
// cgroup probe yes, the repository has a commit, 2 CPUs; programs are
// looked up in PATH for real.
func probes(abi int, err error) Probes {
	return Probes{
		Landlock: func() (int, int, error) { return abi, scopeErrata, err },
		Cgroup:   func() Cgroup { return Cgroup{OK: true, Dir: "/sys/fs/cgroup/test"} },
		LookPath: exec.LookPath,
		Repo: func(context.Context, string, string, time.Duration) RepoState {
			return RepoState{Kind: RepoOK}
		},
		NumCPU:  func() int { return 2 },
		Timeout: 2 * time.Second,
	}
}

// input is a repository at a fake root with the config text src.
func input(t *testing.T, src string) Input {
	t.Helper()
	cfg, err := config.Parse("config.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return Input{Root: t.TempDir(), File: ".runner/config.toml", Config: cfg}
}

const gitOK = `echo "git version 2.39.5"`

// TestLandlockErrata: a kernel's ABI 6 or 7 without the fix of its
// signal scoping (errata 2) is used as ABI 5, as go-landlock does.
func TestLandlockErrata(t *testing.T) {
	l := landlockFrom(7, 0x1, nil)
	if l.ABI != 5 || l.KernelABI != 7 || l.Errata != 1 || len(l.Features) != 5 || !strings.Contains(l.Summary, "not scoped") {
		t.Errorf("ABI 7 without errata 2: %+v", l)
	}
	if l := landlockFrom(4, 0, nil); l.ABI != 4 || l.KernelABI != 4 {
		t.Errorf("ABI 4: %+v", l)
	}
	bin(t, map[string]string{"git": gitOK})
	p := probes(0, nil)
	p.Landlock = func() (int, int, error) { return 6, 0, nil }
	r := Gather(context.Background(), p, input(t, ""))
	var text bytes.Buffer
	WriteText(&text, r)
	if want := "landlock:   ABI 5 (file access, TCP ports and device ioctls; signals and abstract sockets are not scoped (ABI 6)): the kernel's ABI 6 lacks the fix of its signal scoping (Landlock errata 2)\n"; !strings.HasPrefix(text.String(), want) {
		t.Errorf("text:\n%s\nwant first\n%s", text.String(), want)
	}
	if want := "auto → agents and guards run confined (Landlock ABI 5); signals and abstract sockets are not scoped (ABI 6)"; r.Config.Sandbox.Says != want {
		t.Errorf("sandbox %q, want %q", r.Config.Sandbox.Says, want)
	}
}

func TestLandlockFrom(t *testing.T) {
	for _, tc := range []struct {
		abi      int
		err      error
		summary  string
		features int
		why      string
		hint     string
	}{
		{abi: 7, summary: "signals and abstract sockets can be scoped; denials can be logged", features: 8},
		{abi: 6, summary: "signals and abstract sockets can be scoped", features: 7},
		{abi: 3, summary: "file access and truncation; signals and abstract sockets are not scoped (ABI 6)", features: 3},
		{abi: 1, summary: "file access only;", features: 1},
		{abi: 9, summary: "newer than the runner knows", features: 8},
		{abi: 0, why: "the kernel reports no Landlock ABI"},
		{err: syscall.ENOSYS, why: "the kernel has no Landlock", hint: "Linux 5.13 or later"},
		{err: syscall.EOPNOTSUPP, why: "Landlock is disabled at boot", hint: "lsm= boot parameter"},
		{err: syscall.EPERM, why: "Landlock is blocked", hint: "seccomp"},
		{err: errNotLinux, why: "Landlock is Linux only"},
		{err: syscall.EINVAL, why: "Landlock cannot be used", hint: "invalid argument"},
	} {
		t.Run(fmt.Sprint(tc.abi, tc.err), func(t *testing.T) {
			l := landlockFrom(tc.abi, scopeErrata, tc.err)
			if tc.err != nil || tc.abi == 0 {
				if l.ABI != 0 || l.Confines() || l.Why != tc.why || !strings.Contains(l.Hint, tc.hint) {
					t.Errorf("got %+v, want none because %q (%q)", l, tc.why, tc.hint)
				}
				return
			}
			if l.ABI != tc.abi || !l.Confines() || !strings.HasPrefix(l.Summary, tc.summary) || len(l.Features) != tc.features || l.Why != "" {
				t.Errorf("got %+v, want ABI %d: %q, %d features", l, tc.abi, tc.summary, tc.features)
			}
		})
	}
}

// TestSandboxModes: what each sandbox.mode does with Landlock ABI 0, 3
// and 7.
func TestSandboxModes(t *testing.T) {
	bin(t, map[string]string{"git": gitOK})
	for _, tc := range []struct {
		mode     string
		abi      int
		err      error
		says     string
		confined bool
		refuses  bool
	}{
		{"auto", 7, nil, "auto → agents and guards run confined (Landlock ABI 7)", true, false},
		{"auto", 3, nil, "auto → agents and guards run confined (Landlock ABI 3); signals and abstract sockets are not scoped (ABI 6)", true, false},
		{"auto", 0, syscall.ENOSYS, "auto → NOT confined: the kernel has no Landlock (landlock_create_ruleset: ENOSYS;", false, false},
		{"required", 7, nil, "required → agents and guards run confined (Landlock ABI 7)", true, false},
		{"required", 0, syscall.EOPNOTSUPP, "required → the run would refuse to start: Landlock is disabled at boot (landlock_create_ruleset: EOPNOTSUPP; add landlock to the lsm= boot parameter", false, true},
		{"off", 7, nil, "off → not confined, by choice (Landlock ABI 7 is there)", false, false},
		{"off", 0, syscall.ENOSYS, "off → not confined, by choice", false, false},
	} {
		t.Run(fmt.Sprint(tc.mode, tc.abi), func(t *testing.T) {
			r := Gather(context.Background(), probes(tc.abi, tc.err), input(t, fmt.Sprintf("[sandbox]\nmode = %q\n", tc.mode)))
			s := r.Config.Sandbox
			if !strings.HasPrefix(s.Says, tc.says) || s.Confined != tc.confined || s.Refuses != tc.refuses || s.Mode != tc.mode {
				t.Errorf("got %+v\nwant %q confined=%v refuses=%v", s, tc.says, tc.confined, tc.refuses)
			}
			if r.ConfigUnreadable() {
				t.Error("a readable config counts as unreadable")
			}
		})
	}
	r := Gather(context.Background(), probes(7, nil), input(t, "[review]\npreset = \"claude\"\n"))
	if want := "auto → agents, guards and the reviewer run confined (Landlock ABI 7)"; r.Config.Sandbox.Says != want {
		t.Errorf("with a reviewer: %q, want %q", r.Config.Sandbox.Says, want)
	}
}

// TestAgentVersions: a fake codex prints its version, a fake claude
// hangs (and leaves a child holding its output) and is cut off at the
// timeout, the configured bins are looked up, the command preset's
// program is found but not run.
func TestAgentVersions(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep:", err)
	}
	dir := bin(t, map[string]string{
		"git":    gitOK,
		"codex":  `echo; echo "codex-cli 0.169.0"; echo "more"`,
		"claude": sleep + " 30 & " + sleep + " 30",
		"broken": `echo "boom: no config" >&2; exit 3`,
		"quiet":  `exit 0`,
	})
	in := input(t, `
[executor]
preset = "codex"
[[fallback]]
preset = "claude"
bin = "broken"
[[fallback]]
preset = "command"
command = ["quiet", "{prompt_file}"]
[[fallback]]
preset = "claude"
name = "local"
bin = "./tools/agent"
[review]
preset = "codex"
bin = "missing-codex"
`)
	if err := os.MkdirAll(filepath.Join(in.Root, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in.Root, "tools", "agent"), []byte("#!/bin/sh\necho agent 1.0 >&2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := probes(7, nil)
	p.Timeout = 300 * time.Millisecond
	start := time.Now()
	r := Gather(context.Background(), p, in)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Gather took %s with a 300ms timeout", d)
	}
	want := []Tool{
		{Name: "codex", Bin: "codex", Found: true, Path: filepath.Join(dir, "codex"), Version: "codex-cli 0.169.0", UsedBy: []string{"executor"}},
		{Name: "claude", Bin: "claude", Found: true, Path: filepath.Join(dir, "claude"), Error: "timed out after 300ms"},
		{Name: "broken", Bin: "broken", Found: true, Path: filepath.Join(dir, "broken"), Error: "exit status 3: boom: no config", UsedBy: []string{"fallback 1"}},
		{Name: "quiet", Bin: "quiet", Found: true, Path: filepath.Join(dir, "quiet"), Note: "found; not asked its version (preset command)", UsedBy: []string{"fallback 2"}},
		{Name: "./tools/agent", Bin: "./tools/agent", Found: true, Path: filepath.Join(in.Root, "tools", "agent"), Version: "agent 1.0", UsedBy: []string{"fallback 3"}},
		{Name: "missing-codex", Bin: "missing-codex", Error: "not found", UsedBy: []string{"review"}},
	}
	if len(r.Agents) != len(want) {
		t.Fatalf("agents %+v\nwant %+v", r.Agents, want)
	}
	for i := range want {
		got := r.Agents[i]
		if got.Name != want[i].Name || got.Bin != want[i].Bin || got.Found != want[i].Found || got.Path != want[i].Path ||
			got.Version != want[i].Version || got.Error != want[i].Error || got.Note != want[i].Note || !slices.Equal(got.UsedBy, want[i].UsedBy) {
			t.Errorf("agent %d:\n got %+v\nwant %+v", i, got, want[i])
		}
	}
	if !slices.Contains(r.Config.Notices, "review: missing-codex is not found, so it cannot run") {
		t.Errorf("notices %q name no missing reviewer", r.Config.Notices)
	}
	var text bytes.Buffer
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"codex:      codex-cli 0.169.0 (" + filepath.Join(dir, "codex") + ") ← executor\n",
		"claude:     timed out after 300ms (" + filepath.Join(dir, "claude") + ")\n",
		"missing-codex: not found ← review\n",
		"./tools/agent: agent 1.0 (" + filepath.Join(in.Root, "tools", "agent") + ") ← fallback 3\n",
		"  notice:   review: missing-codex is not found, so it cannot run\n",
	} {
		if !strings.Contains(text.String(), line) {
			t.Errorf("text lacks %q:\n%s", line, text.String())
		}
	}
}

// TestGitVersions: the version read, too old, missing.
func TestGitVersions(t *testing.T) {
	for _, tc := range []struct {
		script string
		major  int
		ok     bool
		err    string
		line   string
	}{
		{gitOK, 2, true, "", "git:        git version 2.39.5 ("},
		{`echo "git version 2.20.1"`, 2, false, "", "; TOO OLD: needs 2.25 or later)"},
		{`echo "hello"`, 0, false, "cannot read its version", "git:        cannot read its version ("},
		{"", 0, false, "not found", "git:        not found (the runner needs git 2.25 or later for its checkpoints)"},
	} {
		scripts := map[string]string{}
		if tc.script != "" {
			scripts["git"] = tc.script
		}
		bin(t, scripts)
		r := Gather(context.Background(), probes(7, nil), Input{NoDir: "no .runner here"})
		if r.Git.Major != tc.major || r.Git.OK != tc.ok || r.Git.Error != tc.err || r.Git.Needs != "2.25" {
			t.Errorf("%q: got %+v", tc.script, r.Git)
		}
		var text bytes.Buffer
		WriteText(&text, r)
		if !strings.Contains(text.String(), tc.line) {
			t.Errorf("%q: text lacks %q:\n%s", tc.script, tc.line, text.String())
		}
	}
}

// TestWork: where the agent would work, and loop.parallel.
func TestWork(t *testing.T) {
	repo := func(kind string) func(context.Context, string, string, time.Duration) RepoState {
		return func(context.Context, string, string, time.Duration) RepoState { return RepoState{Kind: kind} }
	}
	for _, tc := range []struct {
		git, src, repo, work, parallel, notice string
	}{
		{gitOK, "", RepoOK, "in a linked worktree beside the checkout (git.worktree = true)", "1 slot on 2 CPUs: one task at a time (loop.parallel = 1)", ""},
		{gitOK, "[git]\nworktree = false\n[loop]\nparallel = 2\n", RepoOK, "in the checkout, switched to the run branch (git.worktree = false)", "2 slots on 2 CPUs", ""},
		{gitOK, "[loop]\nparallel = 4\n", RepoOK, "in a linked worktree", "4 slots on 2 CPUs: agents and their builds compete for them", ""},
		{gitOK, "[loop]\nparallel = 4\n", RepoNone, "in the checkout itself, no commit per task: not a git repository", "4 slots", "loop.parallel = 4 needs git checkpoints: the run would refuse to start"},
		{gitOK, "", RepoUnborn, "in the checkout itself, no commit per task: the repository has no commit yet", "1 slot", ""},
		{gitOK, "[git]\ncheckpoint = false\n", RepoOK, "in the checkout itself, no commit per task: git.checkpoint = false", "1 slot", ""},
		{`echo "git version 2.30.0"`, "[loop]\nparallel = 3\n", RepoOK, "in a linked worktree", "3 slots", "loop.parallel = 3 needs git 2.38 or later: the run would refuse to start"},
		{`echo "git version 2.17.0"`, "", RepoOK, "in the checkout itself, no commit per task: git 2.25 or later is needed", "1 slot", ""},
	} {
		bin(t, map[string]string{"git": tc.git, "codex": "echo codex 1"})
		p := probes(7, nil)
		p.Repo = repo(tc.repo)
		r := Gather(context.Background(), p, input(t, tc.src))
		c := r.Config
		if !strings.HasPrefix(c.Work.Says, tc.work) || !strings.HasPrefix(c.Parallel.Says, tc.parallel) {
			t.Errorf("%q, %s: work %q, parallel %q\nwant %q, %q", tc.src, tc.repo, c.Work.Says, c.Parallel.Says, tc.work, tc.parallel)
		}
		if (tc.notice == "") != (len(c.Notices) == 0) || tc.notice != "" && !slices.Contains(c.Notices, tc.notice) {
			t.Errorf("%q, %s: notices %q, want %q", tc.src, tc.repo, c.Notices, tc.notice)
		}
	}
}

// TestConfigStates: no .runner/ and an unreadable config.
func TestConfigStates(t *testing.T) {
	bin(t, map[string]string{"git": gitOK})
	r := Gather(context.Background(), probes(0, syscall.ENOSYS), Input{NoDir: "no .runner directory in /x or any parent"})
	if r.Config.Found || r.ConfigUnreadable() || r.Config.Note == "" {
		t.Errorf("without .runner/: %+v", r.Config)
	}
	r = Gather(context.Background(), probes(7, nil), Input{Root: t.TempDir(), File: ".runner/config.toml", Err: errors.New("config.toml: line 3: bad\nand more")})
	if !r.ConfigUnreadable() || r.Config.Sandbox != nil {
		t.Errorf("unreadable config: %+v", r.Config)
	}
	var text bytes.Buffer
	WriteText(&text, r)
	want := "config:     .runner/config.toml: CANNOT BE READ\n  error:    config.toml: line 3: bad\n  error:    and more\n"
	if !strings.HasSuffix(text.String(), want) || !strings.HasPrefix(text.String(), "landlock:   ABI 7 (") {
		t.Errorf("text:\n%s\nwant the machine, then\n%s", text.String(), want)
	}
}

// TestJSONShape: the keys of `runner doctor --json`.
func TestJSONShape(t *testing.T) {
	bin(t, map[string]string{"git": gitOK, "codex": "echo codex-cli 1.0"})
	r := Gather(context.Background(), probes(3, nil), input(t, "[sandbox]\nwritable = [\"~/.cache\"]\n"))
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	keys := func(v any) []string {
		var ks []string
		for k := range v.(map[string]any) {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	cfg := m["config"].(map[string]any)
	for path, want := range map[string][]string{
		"":                 {"agents", "cgroup", "config", "cpus", "git", "landlock"},
		"landlock":         {"abi", "errata", "features", "kernel_abi", "summary"},
		"cgroup":           {"dir", "ok"},
		"git":              {"bin", "found", "major", "minor", "name", "needs", "ok", "path", "version"},
		"agents[0]":        {"bin", "found", "name", "path", "used_by", "version"},
		"config":           {"dir", "file", "found", "parallel", "sandbox", "work"},
		"config.sandbox":   {"confined", "mode", "refuses", "says", "writable"},
		"config.work":      {"checkpoint", "repo", "says", "worktree"},
		"config.parallel":  {"cpus", "over", "says", "slots"},
		"config.work.repo": {"kind"},
	} {
		var v any
		switch path {
		case "":
			v = m
		case "agents[0]":
			v = m["agents"].([]any)[0]
		case "config":
			v = cfg
		case "config.work.repo":
			v = cfg["work"].(map[string]any)["repo"]
		default:
			if after, ok := strings.CutPrefix(path, "config."); ok {
				v = cfg[after]
			} else {
				v = m[path]
			}
		}
		if got := keys(v); !slices.Equal(got, want) {
			t.Errorf("%s: keys %q, want %q", path, got, want)
		}
	}
	if m["landlock"].(map[string]any)["abi"] != 3.0 || m["cpus"] != 2.0 {
		t.Errorf("landlock/cpus: %s", buf.String())
	}
}

func TestParseGitVersion(t *testing.T) {
	for s, want := range map[string][2]int{
		"git version 2.39.5":           {2, 39},
		"git version 2.50.0-rc1":       {2, 50},
		"git version 2.45.1.windows.1": {2, 45},
		"git version 3.0":              {3, 0},
	} {
		if got, ok := git.ParseVersion(s); !ok || got != want {
			t.Errorf("%q: %v %v, want %v", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "git version", "git version x.y", "version 2.39.5"} {
		if _, ok := git.ParseVersion(s); ok {
			t.Errorf("%q parsed", s)
		}
	}
}

// TestRoomLayers: doctor lists every layer of the agent's room, what it
// closes and what gives it, or MISSING and why; a missing layer is an
// opening of "auto" and a refusal of "required", but a process limit
// the configuration turned off is no refusal.
func TestRoomLayers(t *testing.T) {
	bin(t, map[string]string{"git": gitOK})
	full := sandbox.Layers{Landlock: 7, Namespaces: sandbox.NamespacesUser, ProcessLimit: "cgroup v2 pids.max"}
	noNS := sandbox.Layers{Landlock: 7, NoNamespaces: "make the namespaces: operation not permitted", ProcessLimit: "cgroup v2 pids.max"}
	for _, tc := range []struct {
		name    string
		config  string
		layers  sandbox.Layers
		says    string
		refuses bool
		lines   []string
	}{
		{"all", "", full, "auto → agents and guards run confined (Landlock ABI 7)", false,
			[]string{"  namespaces:    user, mount and PID namespaces", "  process limit: cgroup v2 pids.max", "  path sockets:  covered and hidden in the room's mount namespace",
				"  tool commands: the tool shell: claude's CLAUDE_CODE_SHELL, codex's login shell in the room's /etc/passwd",
				"                 closes chmod, chown and utime outside the room (read-only mounts)"}},
		{"no namespaces", "", noNS, "auto → agents and guards run confined (Landlock ABI 7); its room leaves open: chmod, chown and utime outside the room (no namespaces: make the namespaces: operation not permitted)", false,
			[]string{"  namespaces:    MISSING: make the namespaces: operation not permitted", "  path sockets:  MISSING: no mount namespace, and Landlock scopes them from ABI 9",
				"  tool commands: the tool shell, for claude only"}},
		{"required without namespaces", "[sandbox]\nmode = \"required\"\n", noNS, "required → the run would refuse to start: its room would leave open: chmod", true, nil},
		{"required, limit off", "[sandbox]\nmode = \"required\"\nmax_processes = 0\n",
			sandbox.Layers{Landlock: 7, Namespaces: sandbox.NamespacesUser, NoProcessLimit: "sandbox.max_processes = 0", ByConfig: true},
			"required → agents and guards run confined (Landlock ABI 7); its room leaves open: no process limit", false,
			[]string{"  process limit: MISSING: sandbox.max_processes = 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := probes(7, nil)
			var asked int
			p.Room = func(max int) sandbox.Layers { asked = max; return tc.layers }
			in := input(t, tc.config)
			r := Gather(context.Background(), p, in)
			if s := r.Config.Sandbox; !strings.HasPrefix(s.Says, tc.says) || s.Refuses != tc.refuses {
				t.Errorf("sandbox %+v\nwant %q refuses=%v", s, tc.says, tc.refuses)
			}
			if asked != in.Config.Sandbox.MaxProcesses {
				t.Errorf("asked with max_processes %d, want %d", asked, in.Config.Sandbox.MaxProcesses)
			}
			var b bytes.Buffer
			WriteText(&b, r)
			for _, l := range append(tc.lines, "room:       the agent's room, layer by layer", "  landlock:      Landlock ABI 7") {
				if !strings.Contains(b.String(), l) {
					t.Errorf("text lacks %q:\n%s", l, b.String())
				}
			}
		})
	}
}
