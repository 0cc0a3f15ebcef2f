package state

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/runner-cli/runner/internal/fsutil"
)

// ErrLocked reports that another runner holds the repository's lock.
var ErrLocked = errors.New("another runner holds the lock")

// ErrLockLost reports that the .runner directory the lock is held on no
// longer is the one at its path: it was removed or replaced while the
// runner ran.
var ErrLockLost = errors.New("the locked .runner directory is no longer at its path")

// Lock is the held lock of one repository: an exclusive flock on the
// .runner directory itself, which no `rm` of a file inside it can take
// away (a lock on the file .runner/lock could be: a second runner would
// lock the new file that replaced it). The kernel releases it when the
// process dies. .runner/lock only tells people and other runners who holds
// the lock (`pid N since TIME`); it is never deleted, and the holder
// writes it again when it finds it gone.
type Lock struct {
	p   Paths
	dir *os.File // .runner, flocked
	ino uint64   // the inode of dir, to tell it is still at its path
	dev uint64
}

// deadHolderWait bounds how long AcquireLock waits for a lock whose
// recorded holder is dead.
const deadHolderWait = 2 * time.Second

// AcquireLock takes the lock without waiting. When another process holds
// it the error wraps ErrLocked and names the holder's pid.
//
// One case waits, briefly: the runner named in .runner/lock is dead, yet
// the lock is still held. A child it was starting when it died shares the
// lock's open file until that child runs its program (the descriptor is
// close-on-exec) or dies of the runner's death (the parent-death signal),
// which takes milliseconds; the lock is taken as soon as the child lets it
// go.
func AcquireLock(p Paths) (*Lock, error) {
	dir, err := openLockDir(p)
	if err != nil {
		return nil, err
	}
	err = syscall.Flock(int(dir.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	for deadline := time.Now().Add(deadHolderWait); errors.Is(err, syscall.EWOULDBLOCK) && time.Now().Before(deadline) && holderDead(p); {
		time.Sleep(10 * time.Millisecond)
		err = syscall.Flock(int(dir.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err != nil {
		dir.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s): %s; wait for it to finish or run `runner stop`", ErrLocked, p.Rel(p.Dir), readHolder(p))
		}
		return nil, fmt.Errorf("lock %s: %w", p.Rel(p.Dir), err)
	}
	l := &Lock{p: p, dir: dir}
	if st, ok := statOf(dir); ok {
		l.dev, l.ino = uint64(st.Dev), uint64(st.Ino)
	}
	// The holder's name only informs: a runner that cannot write it (a
	// full disk) still holds the lock, and Check writes it later.
	l.writeHolder()
	return l, nil
}

// openLockDir opens the .runner directory for locking, refusing a
// symbolic link in its place.
func openLockDir(p Paths) (*os.File, error) {
	st, err := os.Lstat(p.Dir)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", p.Rel(p.Dir), err)
	}
	if st.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("lock %s: it is a symbolic link; the runner does not follow links under .runner/ (move the real folder there)", p.Rel(p.Dir))
	}
	f, err := os.OpenFile(p.Dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", p.Rel(p.Dir), err)
	}
	return f, nil
}

func statOf(f *os.File) (*syscall.Stat_t, bool) {
	fi, err := f.Stat()
	if err != nil {
		return nil, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return st, ok
}

// writeHolder writes `pid N since TIME` to .runner/lock, replacing the
// file (never writing through a link an agent may have put there).
func (l *Lock) writeHolder() error {
	info := fmt.Sprintf("pid %d since %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	return fsutil.ReplaceFile(l.p.Lock(), []byte(info), 0o644, fsutil.NotSynced)
}

// Check reports whether the lock still holds the repository: the
// directory at .runner's path is the one locked. It writes .runner/lock
// again when the file is gone. A runner calls it after anything else ran
// in the repository (the agent, the guards): a lock on a directory that
// was removed or replaced keeps no second runner out of the new one.
func (l *Lock) Check() error {
	if l == nil || l.dir == nil {
		return nil
	}
	st, err := os.Lstat(l.p.Dir)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrLockLost, l.p.Rel(l.p.Dir), err)
	}
	cur, ok := st.Sys().(*syscall.Stat_t)
	if ok && l.ino != 0 && (uint64(cur.Ino) != l.ino || uint64(cur.Dev) != l.dev) {
		return fmt.Errorf("%w: %s was replaced by another folder", ErrLockLost, l.p.Rel(l.p.Dir))
	}
	if _, err := os.Lstat(l.p.Lock()); errors.Is(err, os.ErrNotExist) {
		return l.writeHolder()
	}
	return nil
}

// holderDead reports whether the pid written in .runner/lock names a
// process that no longer exists.
func holderDead(p Paths) bool {
	pid := HolderPID(readHolder(p))
	return pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// readHolder describes the holder from .runner/lock, read without
// following a link and without blocking on something that is not a file.
func readHolder(p Paths) string {
	f, err := os.OpenFile(p.Lock(), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "holder unknown (" + p.Rel(p.Lock()) + " is missing)"
		}
		return "holder unknown"
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "holder unknown"
	}
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
	if l == nil || l.dir == nil {
		return nil
	}
	syscall.Flock(int(l.dir.Fd()), syscall.LOCK_UN)
	err := l.dir.Close()
	l.dir = nil
	return err
}

// LockHolder reports whether a runner currently holds the lock, and who.
// It never takes the lock for longer than the probe.
func LockHolder(p Paths) (held bool, holder string, err error) {
	f, err := os.OpenFile(p.Dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false, "", nil
	}
	if err != nil {
		return false, "", err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return true, readHolder(p), nil
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
