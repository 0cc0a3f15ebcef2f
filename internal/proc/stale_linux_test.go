//go:build linux

package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestCgroupsWithEnv: the cgroup of a supervised command is found by the
// environment of one of its processes and killed whole, also the process
// that cleared its environment.
func TestCgroupsWithEnv(t *testing.T) {
	parent, err := probeCgroup()
	if err != nil {
		t.Skipf("no cgroup here: %v", err)
	}
	mark := fmt.Sprintf("PROC_TEST_CGROUP=%d-%d", os.Getpid(), time.Now().UnixNano())
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(parent, cgroupPrefix+strconv.Itoa(dead.Process.Pid))
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Rmdir(stale) })
	start := func(env ...string) *exec.Cmd {
		t.Helper()
		cmd := exec.Command("sleep", "60")
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go cmd.Wait()
		t.Cleanup(func() { cmd.Process.Kill() })
		if err := writeCgroupFile(filepath.Join(stale, "cgroup.procs"), strconv.Itoa(cmd.Process.Pid)); err != nil {
			t.Skipf("cannot move a process into %s: %v", stale, err)
		}
		return cmd
	}
	marked := start(mark)
	bare := start()

	if got := CgroupsWithEnv(mark); !reflect.DeepEqual(got, []string{stale}) {
		t.Fatalf("CgroupsWithEnv = %v, want [%s]", got, stale)
	}
	if got := CgroupsWithEnv(mark, "PROC_TEST_OTHER=1"); len(got) != 0 {
		t.Errorf("CgroupsWithEnv with an entry no process has = %v, want none", got)
	}
	if err := KillCgroup(stale, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if left := alive([]int{marked.Process.Pid, bare.Process.Pid}); len(left) > 0 {
		t.Errorf("still running after KillCgroup: %v", left)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("%s not removed: %v", stale, err)
	}
	if err := KillCgroup(stale, time.Second); err != nil {
		t.Errorf("KillCgroup of a removed cgroup = %v, want nil", err)
	}
}
