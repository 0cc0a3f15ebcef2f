//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// ProbeNamespaces builds a room in namespaces ns (NamespacesUser or
// NamespacesRoot) as the runner would, with this process's binary as the
// helper (it links this package), and says why it cannot. The room
// writes a temporary directory and keeps a file of it read-only; the
// helper stops once the walls stand (Room.Probe).
func ProbeNamespaces(ns string) error {
	if ns == NamespacesRoot && os.Geteuid() != 0 {
		return errors.New("only root makes mount and PID namespaces without a user namespace")
	}
	dir, err := os.MkdirTemp("", "runner-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	kept := dir + "/kept"
	if err := os.WriteFile(kept, nil, 0o644); err != nil {
		return err
	}
	room := Room{Writable: []string{dir}, ReadOnly: []string{kept}, Namespaces: ns, Probe: true}
	w := Wrap("/proc/self/exe", room, []string{"/proc/self/exe"})
	cmd := exec.Command("/proc/self/exe", w[1:]...)
	cmd.Args[0] = os.Args[0]
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	Clone(room, cmd.SysProcAttr)
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		why := strings.TrimSpace(stderr.String())
		why = strings.TrimPrefix(why, "runner "+ConfineArg+": ")
		why = strings.TrimPrefix(why, "cannot confine /proc/self/exe: ")
		return fmt.Errorf("%s", firstLine(why))
	case err != nil:
		// The kernel refused the namespaces (clone: EPERM, ENOSPC...).
		return fmt.Errorf("make the namespaces: %w", err)
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
