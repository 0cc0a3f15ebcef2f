package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// holderFile names, in a worker's directory, the worker that holds it.
const holderFile = "worker.pid"

// lockDir takes dir for this worker: an exclusive flock on the folder
// itself, which the kernel releases when the process dies. A second
// worker in the same folder would stop the first one's agents as a dead
// worker's leftovers and delete its work; it is refused, naming the
// holder.
func lockDir(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder, _ := os.ReadFile(filepath.Join(dir, holderFile))
			return nil, fmt.Errorf("another runner worker uses %s (%s): give each worker a --dir of its own, or one worker more --slots",
				dir, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	info := fmt.Sprintf("pid %d since %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	_ = os.WriteFile(filepath.Join(dir, holderFile), []byte(info), 0o644) // it only informs
	return func() { f.Close() }, nil
}
