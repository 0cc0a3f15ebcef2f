//go:build linux

package doctor

import (
	"testing"
)

func TestCgroupPaths(t *testing.T) {
	mi := "22 1 0:21 / /proc rw - proc proc rw\n" +
		"41 31 0:38 /user.slice /sys/fs/cgroup/my\\040cg rw,relatime shared:9 - cgroup2 cgroup2 rw\n"
	point, root, ok := cgroup2Mount(mi)
	if !ok || point != "/sys/fs/cgroup/my cg" || root != "/user.slice" {
		t.Errorf("cgroup2Mount: %q %q %v", point, root, ok)
	}
	if _, _, ok := cgroup2Mount("22 1 0:21 / /proc rw - proc proc rw\n"); ok {
		t.Error("a cgroup2 mount found where there is none")
	}
	own, ok := unifiedCgroup("4:memory:/x\n0::/user.slice/session-1.scope\n")
	if !ok || own != "/user.slice/session-1.scope" {
		t.Errorf("unifiedCgroup: %q %v", own, ok)
	}
	if _, ok := unifiedCgroup("4:memory:/x\n"); ok {
		t.Error("a cgroup v2 found in a v1-only file")
	}
}

// TestCgroupProbe: the real probe answers either way, and says why not.
func TestCgroupProbe(t *testing.T) {
	c := probeCgroup()
	if !c.OK && c.Note == "" || c.OK && c.Dir == "" {
		t.Errorf("probe: %+v", c)
	}
	t.Logf("%+v", c)
}

// TestLandlockProbe: the real probe gives an ABI or an errno.
func TestLandlockProbe(t *testing.T) {
	abi, errata, err := landlockABI()
	if abi < 0 || abi == 0 && err == nil || errata != 0 && abi < ScopeLandlockABI {
		t.Errorf("landlockABI: %d, %d, %v", abi, errata, err)
	}
	t.Logf("%+v", landlockFrom(abi, errata, err))
}
