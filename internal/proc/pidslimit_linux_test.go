//go:build linux

package proc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPidsV1Mount: the cgroup v1 hierarchy with the pids controller is
// found in mountinfo, on a hybrid host and in a container whose
// hierarchy's root is its own cgroup; a pure cgroup v2 host has none.
func TestPidsV1Mount(t *testing.T) {
	hybrid := `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
	container := `500 499 0:40 /docker/abc /sys/fs/cgroup/pids ro,nosuid - cgroup cgroup rw,pids,cpu
`
	pure := `30 23 0:27 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate
`
	for _, c := range []struct {
		name, mi, point, root string
		ok                    bool
	}{{"hybrid", hybrid, "/sys/fs/cgroup/pids", "/", true}, {"container", container, "/sys/fs/cgroup/pids", "/docker/abc", true}, {"v2 only", pure, "", "", false}} {
		point, root, ok := pidsV1Mount([]byte(c.mi))
		if point != c.point || root != c.root || ok != c.ok {
			t.Errorf("%s: pidsV1Mount = %q, %q, %v", c.name, point, root, ok)
		}
	}
}

// TestDelegatePids: the pids controller is handed down from a cgroup v2
// that has it, and only then.
func TestDelegatePids(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cgroup.controllers", "cpu memory\n")
	write("cgroup.subtree_control", "")
	if err := delegatePids(dir); err == nil || !strings.Contains(err.Error(), "no pids controller") {
		t.Errorf("without pids: %v", err)
	}
	write("cgroup.controllers", "cpu memory pids\n")
	if err := delegatePids(dir); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control")); string(got) != "+pids" {
		t.Errorf("subtree_control = %q, want +pids", got)
	}
	write("cgroup.subtree_control", "cpu pids\n")
	write("cgroup.controllers", "")
	if err := delegatePids(dir); err != nil {
		t.Errorf("already handed down: %v", err)
	}
}

// TestLimitPidsV2: with the pids controller handed down, a command's
// limit is the pids.max of its cgroup v2; without a cgroup, the command
// does not start; without a limit nothing is written.
func TestLimitPidsV2(t *testing.T) {
	dir := t.TempDir()
	max := filepath.Join(dir, "pids.max")
	if err := os.WriteFile(max, []byte("max"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &command{supervisor: &supervisor{pids: pidsLimiter{v2: true}, cg: &cgroup{dir: dir, fd: -1}}}
	entered, done, err := c.limitPids(300)
	if err != nil {
		t.Fatal(err)
	}
	entered()
	done()
	if got, _ := os.ReadFile(max); string(got) != "300" {
		t.Errorf("pids.max = %q, want 300", got)
	}
	os.WriteFile(max, []byte("max"), 0o644)
	if _, _, err := c.limitPids(0); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(max); string(got) != "max" {
		t.Errorf("a limit of 0 wrote pids.max: %q", got)
	}
	c.cg, c.noCgroup = nil, "no cgroup here"
	if _, _, err := c.limitPids(300); err == nil || !strings.Contains(err.Error(), "no cgroup here") {
		t.Errorf("without a cgroup: %v", err)
	}
}
