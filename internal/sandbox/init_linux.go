//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// Secure bits that keep a root process from getting capabilities back
// on exec (capabilities(7)); x/sys/unix does not name them.
const (
	secbitNoRoot             = 1 << 0
	secbitNoRootLocked       = 1 << 1
	secbitNoSetuidFixup      = 1 << 2
	secbitNoSetuidFixupLock  = 1 << 3
	secbitKeepCapsLocked     = 1 << 5
	secbitNoCapAmbientRaise  = 1 << 6
	secbitNoCapAmbientLocked = 1 << 7
)

// runInit runs the command as the child of the helper, which is the
// first process of the room's PID namespace, and returns the command's
// exit status: its code, or 128+N when signal N killed it. On the
// helper's locked thread, every capability is dropped before the fork,
// so that the command (root included, with no_new_privs set) has none.
// The helper reaps every orphan of the room meanwhile, as an init does.
// Signals reach the command through its process group, which it shares
// with the helper (that is how the runner stops a command); the helper
// catches those that would end it (initSignals, from notifyInit), so
// that the command is not killed with it.
func runInit(room Room, path string, argv, env []string, sigs <-chan os.Signal) (int, error) {
	if room.MaxProcesses > 0 && room.Namespaces == NamespacesUser {
		// Counted per user namespace: only the room's processes count.
		n := uint64(room.MaxProcesses)
		if err := unix.Prlimit(0, unix.RLIMIT_NPROC, &unix.Rlimit{Cur: n, Max: n}, nil); err != nil {
			return 0, fmt.Errorf("limit the room's processes: %w", err)
		}
	}
	if err := dropCapabilities(); err != nil {
		return 0, err
	}
	if room.Probe {
		return 0, nil
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: env, Files: []uintptr{0, 1, 2}})
	if err != nil {
		return 0, &os.PathError{Op: "exec", Path: path, Err: err}
	}
	for {
		for {
			var ws unix.WaitStatus
			got, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil || got <= 0 {
				break
			}
			if got == pid {
				if ws.Signaled() {
					return 128 + int(ws.Signal()), nil
				}
				return ws.ExitStatus(), nil
			}
		}
		<-sigs
	}
}

// initSignals are the signals that end a Go program unless it catches
// them (os/signal); the others it catches and ignores by itself.
// SIGCHLD wakes the helper to reap.
var initSignals = []os.Signal{syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGABRT}

// notifyInit starts catching initSignals in the background (their first
// catch starts a thread, which overlaps the building of the walls); the
// channel is ready once ready is closed. A signal the helper was started
// with ignored stays ignored, for the command to inherit.
func notifyInit() (sigs chan os.Signal, ready <-chan struct{}) {
	sigs = make(chan os.Signal, 32)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, s := range initSignals {
			if !signal.Ignored(s) {
				signal.Notify(sigs, s)
			}
		}
	}()
	return sigs, done
}

// dropCapabilities drops every capability of the calling thread (the
// helper's locked one, which forks the command): the ambient ones
// Clone gave, and, for root, the bounding set, with the secure bits
// that keep an exec from granting them again.
func dropCapabilities() error {
	if os.Getuid() == 0 {
		bits := secbitNoRoot | secbitNoRootLocked | secbitNoSetuidFixup | secbitNoSetuidFixupLock |
			secbitKeepCapsLocked | secbitNoCapAmbientRaise | secbitNoCapAmbientLocked
		if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits), 0, 0, 0); err != nil {
			return fmt.Errorf("drop root's capabilities: set the secure bits: %w", err)
		}
		for c := 0; c <= unix.CAP_LAST_CAP; c++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
				return fmt.Errorf("drop root's capabilities: bounding set: %w", err)
			}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("drop the ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("drop the capabilities: %w", err)
	}
	return nil
}
