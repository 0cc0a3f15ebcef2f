package state

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrLocked reports that another runner holds the repository's lock.
var ErrLocked = errors.New("another runner holds the lock")

// Lock is a held .runner/lock. The kernel releases it if the process dies;
// the file itself is never deleted.
type Lock struct {
	f *os.File
}

// deadHolderWait bounds how long AcquireLock waits for a lock whose
// recorded holder is dead.
const deadHolderWait = 2 * time.Second

// AcquireLock takes the lock without waiting. When another process holds
// it the error wraps ErrLocked and names the holder's pid.
//
// One case waits, briefly: the runner named in the file is dead, yet the
// lock is still held. A child it was starting when it died shares the
// lock's open file until that child runs its program (the descriptor is
// close-on-exec) or dies of the runner's death (Pdeathsig), which takes
// milliseconds; the lock is taken as soon as the child lets it go.
func AcquireLock(p Paths) (*Lock, error) {
	f, err := os.OpenFile(p.Lock(), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", p.Rel(p.Lock()), err)
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	for deadline := time.Now().Add(deadHolderWait); errors.Is(err, syscall.EWOULDBLOCK) && time.Now().Before(deadline) && holderDead(f); {
		time.Sleep(10 * time.Millisecond)
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err != nil {
		holder := readHolder(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s): %s; wait for it to finish or run `runner stop`", ErrLocked, p.Rel(p.Lock()), holder)
		}
		return nil, fmt.Errorf("lock %s: %w", p.Rel(p.Lock()), err)
	}
	info := fmt.Sprintf("pid %d since %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(info), 0)
		f.Sync()
	}
	return &Lock{f: f}, nil
}

// holderDead reports whether the pid written in the lock file names a
// process that no longer exists.
func holderDead(f *os.File) bool {
	pid := HolderPID(readHolder(f))
	return pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func readHolder(f *os.File) string {
	buf := make([]byte, 128)
	n, _ := f.ReadAt(buf, 0)
	s := strings.TrimSpace(string(buf[:n]))
	if s == "" {
		return "holder unknown"
	}
	return "held by " + s
}

// Release frees the lock.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	err := l.f.Close()
	l.f = nil
	return err
}

// LockHolder reports whether a runner currently holds the lock, and who.
// It never takes the lock for longer than the probe.
func LockHolder(p Paths) (held bool, holder string, err error) {
	f, err := os.OpenFile(p.Lock(), os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false, "", nil
	}
	if err != nil {
		return false, "", err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return true, readHolder(f), nil
		}
		return false, "", err
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false, "", nil
}

// HolderPID extracts the pid from a holder description, or 0.
func HolderPID(holder string) int {
	fields := strings.Fields(holder)
	for i, f := range fields {
		if f == "pid" && i+1 < len(fields) {
			n, _ := strconv.Atoi(fields[i+1])
			return n
		}
	}
	return 0
}
