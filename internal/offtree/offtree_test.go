package offtree

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// laterThan returns the change time of a file made once the kernel's
// clock for file times has passed every file under root: what is made
// after it is new, what is there now is not. It waits for the clock's
// next tick (a few milliseconds), bounded.
func laterThan(t *testing.T, root string) time.Time {
	t.Helper()
	var last time.Time
	filepath.Walk(root, func(p string, st os.FileInfo, err error) error {
		if err == nil && ChangeTime(st).After(last) {
			last = ChangeTime(st)
		}
		return nil
	})
	probe := filepath.Join(t.TempDir(), "probe")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		os.Remove(probe)
		if err := os.WriteFile(probe, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := os.Lstat(probe)
		if err != nil {
			t.Fatal(err)
		}
		if c := ChangeTime(st); c.After(last) {
			return c
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the file clock did not move in 10s")
	return time.Time{}
}

func exists(root, rel string) bool {
	_, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
	return err == nil
}

// TestHideAndRestore: what was made or changed since the work started
// is moved out of the working tree (a folder all new moves whole, in an
// older one only what is new), what was there before stays; Restore puts
// everything back and removes the hiding folder.
func TestHideAndRestore(t *testing.T) {
	top, dir := t.TempDir(), filepath.Join(t.TempDir(), "hidden")
	write(t, top, "node_modules/a/index.js", "old")
	write(t, top, "node_modules/b/index.js", "old")
	write(t, top, "cache.db", "old")
	since := laterThan(t, top)
	write(t, top, "node_modules/a/index.js", "changed by the agent")
	write(t, top, "node_modules/leftpad/index.js", "new")
	write(t, top, "node_modules/leftpad/package.json", "{}")
	write(t, top, "secret.env", "TOKEN=x")
	write(t, top, "vendor/lib/.git/HEAD", "ref: refs/heads/main")
	os.Symlink("/etc", filepath.Join(top, "link"))

	res, err := Hide(top, []string{"node_modules/", "cache.db", "secret.env", "vendor/lib/", "link", "gone/"}, since, dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(res.Moved)
	want := []string{"link", "node_modules/a/index.js", "node_modules/leftpad", "secret.env", "vendor/lib"}
	if !slices.Equal(res.Moved, want) || len(res.Stuck) != 0 {
		t.Fatalf("moved %q, stuck %q; want %q", res.Moved, res.Stuck, want)
	}
	for _, rel := range want {
		if exists(top, rel) {
			t.Errorf("%s is still in the working tree", rel)
		}
	}
	for _, rel := range []string{"node_modules/b/index.js", "cache.db", "node_modules/a"} {
		if !exists(top, rel) {
			t.Errorf("%s, there before, was moved", rel)
		}
	}
	dropped, err := Restore(top, dir)
	if err != nil || len(dropped) != 0 {
		t.Fatalf("Restore = %q, %v", dropped, err)
	}
	for _, rel := range append(want, "node_modules/leftpad/package.json") {
		if !exists(top, rel) {
			t.Errorf("%s was not put back", rel)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(top, "node_modules/a/index.js")); string(data) != "changed by the agent" {
		t.Errorf("index.js put back as %q", data)
	}
	if exists(filepath.Dir(dir), "hidden") {
		t.Error("the hiding folder is left")
	}
	// Nothing hidden: nothing to restore.
	if res, err := Hide(top, nil, since, dir); err != nil || len(res.Moved) != 0 {
		t.Errorf("Hide of nothing = %+v, %v", res, err)
	}
}

// TestRestoreKeepsTheGuards: a path the guards made again while the
// agent's version was hidden keeps the guards'; a folder the guards
// replaced with a link is not followed; what a Hide interrupted after
// listing an entry and before moving it is skipped.
func TestRestoreKeepsTheGuards(t *testing.T) {
	top, outside, dir := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "hidden")
	since := laterThan(t, top)
	write(t, top, "build/out.o", "the agent's")
	write(t, top, "deps/x/a.js", "the agent's")
	res, err := Hide(top, []string{"build/", "deps/"}, since, dir)
	if err != nil || len(res.Moved) != 2 {
		t.Fatalf("Hide = %+v, %v", res, err)
	}
	write(t, top, "build/out.o", "the guards'")
	os.Symlink(outside, filepath.Join(top, "deps"))
	// A line of an entry never moved (the runner died between the two).
	f, _ := os.OpenFile(filepath.Join(dir, manifest), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("9\tnever/moved\n")
	f.Close()
	dropped, err := Restore(top, dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(dropped)
	if want := []string{"build", "deps"}; !slices.Equal(dropped, want) {
		t.Errorf("dropped %q, want %q", dropped, want)
	}
	if data, _ := os.ReadFile(filepath.Join(top, "build/out.o")); string(data) != "the guards'" {
		t.Errorf("build/out.o = %q, want the guards'", data)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("something was put back through the link, outside the working tree: %v", entries)
	}
}

// TestHideRestoresLeftovers: a Hide first puts back what an earlier one
// (a runner that died during the guards) left hidden.
func TestHideRestoresLeftovers(t *testing.T) {
	top, dir := t.TempDir(), filepath.Join(t.TempDir(), "hidden")
	since := laterThan(t, top)
	write(t, top, "a.log", "x")
	if _, err := Hide(top, []string{"a.log"}, since, dir); err != nil {
		t.Fatal(err)
	}
	res, err := Hide(top, []string{"a.log"}, time.Now().Add(time.Hour), dir)
	if err != nil || len(res.Moved) != 0 || !exists(top, "a.log") {
		t.Fatalf("Hide = %+v, %v; want a.log put back and not moved again", res, err)
	}
}
