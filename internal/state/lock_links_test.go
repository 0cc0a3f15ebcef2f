package state

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/runner-cli/runner/internal/fsutil"
)

// TestLockHolderIsNeverWrittenThroughALink: an agent replaced
// .runner/lock, the file naming the lock's holder, with a symbolic link or
// a hard link to a file outside. Taking the lock writes the holder to a
// file of the runner's own in its place; the file outside keeps its
// content.
func TestLockHolderIsNeverWrittenThroughALink(t *testing.T) {
	for name, link := range map[string]func(target, lock string) error{
		"symbolic link": os.Symlink,
		"hard link":     os.Link,
	} {
		t.Run(name, func(t *testing.T) {
			base := t.TempDir()
			p := NewPaths(filepath.Join(base, "repo"))
			outside := filepath.Join(base, "bashrc")
			if err := os.MkdirAll(p.Dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(outside, []byte("keep\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := link(outside, p.Lock()); err != nil {
				t.Fatal(err)
			}
			if err := fsutil.Confine(p.Dir); err != nil {
				t.Fatal(err)
			}
			defer fsutil.Release(p.Dir)
			l, err := AcquireLock(p)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release()
			if got, _ := os.ReadFile(outside); string(got) != "keep\n" {
				t.Errorf("the file outside holds %q", got)
			}
			var st syscall.Stat_t
			if err := syscall.Lstat(p.Lock(), &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink != 1 {
				t.Errorf("%s is not a file of the runner's own: mode %o, %d links (%v)", p.Lock(), st.Mode, st.Nlink, err)
			}
			if got, _ := os.ReadFile(p.Lock()); !strings.HasPrefix(string(got), fmt.Sprintf("pid %d ", os.Getpid())) {
				t.Errorf("%s holds %q, want this process as the holder", p.Lock(), got)
			}
		})
	}
}
