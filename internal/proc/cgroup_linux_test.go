//go:build linux

package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSupervisorUsesCgroup: where a cgroup can be made, each command runs
// in a new cgroup of its own below the runner's, named after its
// supervisor, and removed once the command is done.
func TestSupervisorUsesCgroup(t *testing.T) {
	needSupervisor(t)
	parent, err := probeCgroup()
	if err != nil {
		t.Skipf("no cgroup here: %v", err)
	}
	seen := map[string]bool{}
	for i := 0; i < 3; i++ {
		out := NewTailBuffer(4096)
		r := runBounded(t, context.Background(), Spec{Argv: []string{"sh", "-c", "echo $PPID; cat /proc/self/cgroup"}, Stdout: out}, time.Minute)
		if r.ExitCode != 0 {
			t.Fatalf("Run = %+v", r)
		}
		lines := strings.SplitN(string(out.Bytes()), "\n", 2)
		own, ok := unifiedCgroup([]byte(lines[1]))
		if !ok {
			t.Fatalf("no cgroup v2 in %q", out.Bytes())
		}
		name := filepath.Base(own)
		if pid, _, ok := cgroupOwner(name); !ok || strconv.Itoa(pid) != strings.TrimSpace(lines[0]) {
			t.Errorf("the command ran in cgroup %s, want one named after its supervisor %s", own, lines[0])
		}
		if seen[name] {
			t.Errorf("cgroup %s used twice", name)
		}
		seen[name] = true
		// The supervisor removes it right after it says the command is done.
		gone := waitFor(func() bool {
			_, err := os.Stat(filepath.Join(parent, name))
			return os.IsNotExist(err)
		}, time.Now().Add(10*time.Second))
		if !gone {
			t.Errorf("cgroup %s left after the run", name)
		}
	}
}

// TestStaleCgroupsRemoved: an empty cgroup left by a supervisor that was
// killed is removed when a runner starts using the supervisor; one whose
// supervisor runs is not.
func TestStaleCgroupsRemoved(t *testing.T) {
	parent, err := probeCgroup()
	if err != nil {
		t.Skipf("no cgroup here: %v", err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(parent, cgroupPrefix+strconv.Itoa(gone.Process.Pid))
	live := filepath.Join(parent, cgroupPrefix+strconv.Itoa(os.Getpid()))
	for _, d := range []string{stale, live} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Rmdir(d) })
	}
	removeStaleCgroups(parent)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale cgroup %s not removed: %v", stale, err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("cgroup %s of a live process removed: %v", live, err)
	}
}

func TestCgroup2Mount(t *testing.T) {
	tests := []struct {
		name, mountinfo  string
		point, root      string
		ok               bool
		own, dir, dirErr string
	}{
		{
			name: "hybrid",
			mountinfo: "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n" +
				"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n" +
				"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n",
			point: "/sys/fs/cgroup/unified", root: "/", ok: true,
			own: "/", dir: "/sys/fs/cgroup/unified",
		},
		{
			name:      "unified, with optional fields",
			mountinfo: "35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n",
			point:     "/sys/fs/cgroup", root: "/", ok: true,
			own: "/user.slice/user-1000.slice/session-2.scope", dir: "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope",
		},
		{
			name:      "a subtree mounted, with a space in the mount point",
			mountinfo: "50 40 0:30 /ci/job /mnt/cg\\040v2 rw - cgroup2 none rw\n",
			point:     "/mnt/cg v2", root: "/ci/job", ok: true,
			own: "/ci/job/step", dir: "/mnt/cg v2/step",
		},
		{
			name:      "own cgroup outside the mounted subtree",
			mountinfo: "50 40 0:30 /ci/job /mnt/cg rw - cgroup2 none rw\n",
			point:     "/mnt/cg", root: "/ci/job", ok: true,
			own: "/ci/jobs", dirErr: "outside the cgroup2 mount",
		},
		{
			name:      "cgroup v1 only",
			mountinfo: "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			point, root, ok := cgroup2Mount([]byte(tt.mountinfo))
			if point != tt.point || root != tt.root || ok != tt.ok {
				t.Fatalf("cgroup2Mount = %q, %q, %v; want %q, %q, %v", point, root, ok, tt.point, tt.root, tt.ok)
			}
			if !ok {
				return
			}
			dir, err := cgroupDir(point, root, tt.own)
			if tt.dirErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.dirErr) {
					t.Errorf("cgroupDir = %q, %v; want an error saying %q", dir, err, tt.dirErr)
				}
				return
			}
			if err != nil || dir != tt.dir {
				t.Errorf("cgroupDir = %q, %v; want %q", dir, err, tt.dir)
			}
		})
	}
	own, ok := unifiedCgroup([]byte("12:pids:/\n1:name=systemd:/x\n0::/a/b\n"))
	if !ok || own != "/a/b" {
		t.Errorf("unifiedCgroup = %q, %v; want /a/b", own, ok)
	}
}
