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

// TestGroupsWithEnvSince checks that a mark limits the search to processes
// started since it, and that a process started after the mark is found
// also when it left its parent's group.
func TestGroupsWithEnvSince(t *testing.T) {
	env := fmt.Sprintf("PROC_TEST_SINCE=%d-%d", os.Getpid(), time.Now().UnixNano())
	start := func(args ...string) *exec.Cmd {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), env)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		})
		return cmd
	}
	old := start("sleep", "60")           // starts nothing after the mark
	mark := MarkPIDs(old.Process.Pid + 1) // as if a process had started just after old
	fresh := start("sh", "-c", "sleep 60 & sleep 60")
	if fresh.Process.Pid <= old.Process.Pid {
		t.Skip("process ids wrapped around between the two starts")
	}
	var all []int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if all = GroupsWithEnvSince(PIDMark{}, env); len(all) == 2 {
			break
		}
	}
	if want := []int{old.Process.Pid, fresh.Process.Pid}; !reflect.DeepEqual(all, want) {
		t.Fatalf("GroupsWithEnvSince(no mark) = %v, want %v", all, want)
	}
	if mark.pid == 0 {
		t.Fatal("MarkPIDs could not read /proc/stat")
	}
	if got, want := GroupsWithEnvSince(mark, env), []int{fresh.Process.Pid}; !reflect.DeepEqual(got, want) {
		t.Errorf("GroupsWithEnvSince(mark) = %v, want only the group started after the mark %v", got, want)
	}
	// A mark whose ids may have wrapped around looks at every process.
	wrapped := PIDMark{pid: mark.pid, forks: mark.forks - 1<<40}
	if got := GroupsWithEnvSince(wrapped, env); !reflect.DeepEqual(got, all) {
		t.Errorf("GroupsWithEnvSince(wrapped mark) = %v, want every group %v", got, all)
	}
}
