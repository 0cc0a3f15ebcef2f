package git

import (
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"testing"
	"time"
)

// TestStaleLocks: an old lock file that no process holds is stale; one a
// live process holds open, and one just made, are not; the ref locks
// looked at are those under the refs named.
func TestStaleLocks(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("telling a held lock from a stale one needs /proc")
	}
	s := newScratch(t)
	old := time.Now().Add(-time.Hour)
	mk := func(rel string, when time.Time) string {
		p := filepath.Join(s.dir, ".git", filepath.FromSlash(rel))
		writeFile(t, p, "")
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
		return p
	}
	index := mk("index.lock", old)
	branch := mk("refs/heads/runner/app.lock", old)
	runner := mk("refs/runner/attempts/3.lock", old)
	other := mk("refs/heads/main.lock", old)
	fresh := mk("HEAD.lock", time.Now())
	held := mk("packed-refs.lock", old)
	holder := exec.Command("sh", "-c", "exec 3<\"$1\"; read x", "sh", held)
	in, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); holder.Wait() }()
	// The holder opens the file first thing; wait until it has.
	deadline := time.Now().Add(30 * time.Second)
	for {
		open, _ := openFiles()
		if open[held] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the holder did not open the lock within 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}

	got := s.r.StaleLocks([]string{filepath.Join(s.dir, ".git")}, []string{"refs/heads/runner/app", "refs/runner/"})
	slices.Sort(got)
	want := []string{index, branch, runner}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("stale: %q\nwant %q (not %s, %s, %s)", got, want, other, fresh, held)
	}
	if err := RemoveLocks(got); err != nil {
		t.Fatal(err)
	}
	for _, p := range want {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", p, err)
		}
	}
}
