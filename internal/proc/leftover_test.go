//go:build linux

package proc

import (
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"syscall"
	"testing"
	"time"
)

func TestGroupsWithEnv(t *testing.T) {
	mark := fmt.Sprintf("PROC_TEST_MARK=%d-%d", os.Getpid(), time.Now().UnixNano())
	start := func(ownGroup bool, env ...string) *exec.Cmd {
		t.Helper()
		// The shell leaves a grandchild in the group that inherits the marker.
		cmd := exec.Command("sh", "-c", "sleep 60 & sleep 60")
		cmd.Env = append(os.Environ(), env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: ownGroup}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if ownGroup {
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			} else {
				cmd.Process.Kill()
			}
			cmd.Wait()
		})
		return cmd
	}
	a := start(true, mark, "RUNNER_ITERATION=7")
	start(true, mark, "RUNNER_ITERATION=8")
	start(false, mark, "RUNNER_ITERATION=7") // in the test's own group: never returned

	// The children need a moment to exec with their environment.
	var got []int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got = GroupsWithEnv(mark, "RUNNER_ITERATION=7"); len(got) > 0 {
			break
		}
	}
	if want := []int{a.Process.Pid}; !reflect.DeepEqual(got, want) {
		t.Fatalf("GroupsWithEnv = %v, want %v", got, want)
	}
	if got := GroupsWithEnv(mark); len(got) != 2 {
		t.Errorf("GroupsWithEnv(marker only) = %v, want the two groups of their own", got)
	}
	if err := KillGroup(a.Process.Pid, time.Second); err != nil {
		t.Fatal(err)
	}
	if got := GroupsWithEnv(mark, "RUNNER_ITERATION=7"); len(got) != 0 {
		t.Errorf("GroupsWithEnv after KillGroup = %v, want none", got)
	}
	if got := GroupsWithEnv(); got != nil {
		t.Errorf("GroupsWithEnv() = %v, want nil", got)
	}
}
