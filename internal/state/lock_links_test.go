package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runner-cli/runner/internal/fsutil"
)

// TestLockIsNeverWrittenThroughALink: an agent replaced .runner/lock with
// a symbolic link or a hard link to a file outside. The runner refuses to
// take the lock, saying why, and the file outside keeps its content (the
// lock's holder line would otherwise truncate it).
func TestLockIsNeverWrittenThroughALink(t *testing.T) {
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
			if err == nil {
				l.Release()
				t.Fatal("AcquireLock took a lock through a link")
			}
			t.Logf("refused: %v", err)
			if !strings.Contains(err.Error(), "lock") || !(strings.Contains(err.Error(), "symbolic link") || strings.Contains(err.Error(), "2 links")) {
				t.Errorf("AcquireLock = %v; want a refusal saying why", err)
			}
			if got, _ := os.ReadFile(outside); string(got) != "keep\n" {
				t.Errorf("the file outside holds %q", got)
			}
		})
	}
}
