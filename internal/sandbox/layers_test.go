package sandbox

import (
	"strings"
	"testing"
)

// TestLayersOpenings: every layer missing is an opening named with why;
// "required" counts those the machine should give, not a limit the
// configuration turned off.
func TestLayersOpenings(t *testing.T) {
	all := Layers{Landlock: 7, Namespaces: NamespacesUser, ProcessLimit: "cgroup v2 pids.max"}
	cases := []struct {
		name    string
		l       Layers
		open    []string
		missing bool
	}{
		{"all", all, nil, false},
		{"no Landlock", Layers{NoLandlock: "none"}, nil, true},
		{"no namespaces", Layers{Landlock: 7, NoNamespaces: "clone: EPERM", ProcessLimit: "cgroup v2 pids.max"},
			[]string{"chmod, chown and utime outside the room (no namespaces: clone: EPERM)", "the runner's /proc", "the worktree's .git file", "codex's standard output", "path sockets outside the room"}, true},
		{"no namespaces, Landlock 9", Layers{Landlock: 9, NoNamespaces: "x", ProcessLimit: "y"},
			[]string{"chmod, chown and utime", "the runner's /proc", "the worktree's .git file", "codex's standard output"}, true},
		{"no process limit", Layers{Landlock: 7, Namespaces: NamespacesRoot, NoProcessLimit: "no cgroup"},
			[]string{"no process limit: a fork flood reaches the other slots and the machine (no cgroup)"}, true},
		{"limit off by config", Layers{Landlock: 7, Namespaces: NamespacesUser, NoProcessLimit: "sandbox.max_processes = 0", ByConfig: true},
			[]string{"no process limit"}, false},
		{"old Landlock", Layers{Landlock: 5, Namespaces: NamespacesUser, ProcessLimit: "x"},
			[]string{"signals to, and abstract sockets of, processes outside the room (Landlock ABI 5 scopes them from 6)"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.l.Openings()
			if len(got) != len(c.open) {
				t.Fatalf("Openings = %q, want %d like %q", got, len(c.open), c.open)
			}
			for i, want := range c.open {
				if !strings.HasPrefix(got[i], want) {
					t.Errorf("opening %d = %q, want it to start with %q", i, got[i], want)
				}
			}
			if m := c.l.Missing(); m != c.missing {
				t.Errorf("Missing = %v, want %v", m, c.missing)
			}
			if list := c.l.List(); len(list) != 5 {
				t.Errorf("List has %d layers, want 5", len(list))
			}
		})
	}
}
