package engine

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/sandbox"
)

// roomWith is a room rule whose programs may write dirs beside their
// worktree and temporary directory, and cfg's [sandbox] writable.
func roomWith(dirs ...string) func(cfg *config.Config, work, tmp string) *sandbox.Room {
	return func(cfg *config.Config, work, tmp string) *sandbox.Room {
		return &sandbox.Room{Writable: append(append([]string{work, tmp}, dirs...), cfg.Sandbox.Writable...)}
	}
}

// A worker starts only with a key (or told it may run without), and
// never in a folder a room may write, nor holding one.
func TestWorkerStartChecks(t *testing.T) {
	home := t.TempDir()
	cache := filepath.Join(home, ".cache")
	for _, c := range []struct {
		name string
		w    *Worker
		want string // "" : it starts
	}{
		{"no key", &Worker{Dir: filepath.Join(home, "w"), Room: roomWith(cache)}, "no engine key"},
		{"unprotected", &Worker{Dir: filepath.Join(home, "w"), Room: roomWith(cache), Unprotected: true}, ""},
		{"keyed", &Worker{Dir: filepath.Join(home, ".local", "state", "w"), Room: roomWith(cache), Key: testKey}, ""},
		{"in the cache", &Worker{Dir: filepath.Join(cache, "runner", "worker"), Room: roomWith(cache), Key: testKey}, "lies in " + cache},
		{"holding the cache", &Worker{Dir: home, Room: roomWith(cache), Key: testKey}, "holds " + cache},
		{"a floor unknown", &Worker{Dir: filepath.Join(home, "w"), Room: roomWith(cache), Key: testKey, Sandbox: "sometimes"}, "want auto"},
	} {
		err := c.w.checkStart()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

// No input lowers the worker's floor, nor opens its folder to a room.
func TestWorkerAdmits(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	cfg := func(mode string, writable ...string) *config.Config {
		c := &config.Config{}
		c.Sandbox.Mode, c.Sandbox.Writable = mode, writable
		return c
	}
	floored := &Worker{Dir: dir, Room: roomWith(), floor: true, Sandbox: FloorAuto}
	open := &Worker{Dir: dir, Room: roomWith(), floor: false, Sandbox: FloorOff}
	for _, c := range []struct {
		name string
		w    *Worker
		cfg  *config.Config
		want string
	}{
		{"off below the floor", floored, cfg(config.SandboxOff), `below this worker's floor (--sandbox auto`},
		{"auto on the floor", floored, cfg(config.SandboxAuto), ""},
		{"off with no floor", open, cfg(config.SandboxOff), ""},
		{"a room writing the folder", floored, cfg(config.SandboxAuto, filepath.Dir(dir)), "lies in " + filepath.Dir(dir)},
		{"a room writing into the folder", floored, cfg(config.SandboxRequired, filepath.Join(dir, "repo")), "holds " + filepath.Join(dir, "repo")},
	} {
		err := c.w.admit(c.cfg)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (!isRefused(err) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want a refusal saying %q", c.name, err, c.want)
		}
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	if d, _ := DefaultDir(); d != "/state/runner/worker" {
		t.Errorf("with XDG_STATE_HOME: %s", d)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if d, _ := DefaultDir(); d != "/home/u/.local/state/runner/worker" {
		t.Errorf("without XDG_STATE_HOME: %s", d)
	}
}

// A worker says it is protected only where its rooms hide the engine
// key (namespaces); with Landlock alone it says its agents may read it,
// and why.
func TestWorkerSaysProtection(t *testing.T) {
	for _, c := range []struct {
		name   string
		layers sandbox.Layers
		want   string
	}{
		{"namespaces", sandbox.Layers{Landlock: 7, Namespaces: sandbox.NamespacesUser}, "runner worker w: protected: it runs only iterations signed with the engine key, confined\n"},
		{"Landlock alone", sandbox.Layers{Landlock: 7, NoNamespaces: "left out by RUNNER_SANDBOX_WITHOUT"},
			"runner worker w: NOT PROTECTED: its agents may read the engine key: the rooms have no mount namespace of their own (left out by RUNNER_SANDBOX_WITHOUT)"},
	} {
		var log strings.Builder
		w := &Worker{Name: "w", Key: testKey, Log: &log, floor: true, Sandbox: FloorAuto,
			Layers: func(int) sandbox.Layers { return c.layers }}
		w.sayProtection()
		if !strings.HasPrefix(log.String(), c.want) {
			t.Errorf("%s: the worker says %q, want %q", c.name, log.String(), c.want)
		}
	}
}
