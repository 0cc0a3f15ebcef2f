//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRoomHides: in namespaces, a hidden file reads as empty (named
// through a link too) and a hidden folder as empty, and neither can be
// changed; without namespaces, Landlock alone lets the room read both,
// which is why such a room does not count as hiding them. A hidden path
// that does not exist is no obstacle; a hidden folder that holds the
// room cannot be hidden, and the room is not built.
func TestRoomHides(t *testing.T) {
	nsModes(t, func(t *testing.T, ns string) {
		room, outside := mkdir(t), mkdir(t)
		key, dir, link := filepath.Join(outside, "engine.key"), filepath.Join(outside, "secrets"), filepath.Join(outside, "key-link")
		writeFile(t, key, "the engine key\n", 0o600)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "inner"), "more secrets\n", 0o644)
		if err := os.Symlink(key, link); err != nil {
			t.Fatal(err)
		}
		script := `cat "$1" "$2/inner" 2>&1; ls -A "$2"; echo tamper >"$1" 2>&1; echo tamper >"$2/new" 2>&1; echo end`
		hidden := []string{link, dir, filepath.Join(outside, "no-such-file")}
		for _, c := range []struct {
			name   string
			room   Room
			hidden bool
		}{
			{"namespaces", Room{Writable: []string{room}, Hidden: hidden, Namespaces: ns}, true},
			{"Landlock alone", Room{Writable: []string{room}, Hidden: hidden}, false},
		} {
			if c.room.Namespaces == "" && spawnAs != nil {
				continue // the control runs once, as the test's user
			}
			out, code := runConfined(t, c.room, nil, "sh", "-c", script, "sh", key, dir)
			read := strings.Contains(out, "the engine key") || strings.Contains(out, "more secrets") || strings.Contains(out, "\ninner\n")
			switch {
			case code != 0 || !strings.Contains(out, "end"):
				t.Errorf("%s: exit %d:\n%s", c.name, code, out)
			case c.hidden && read:
				t.Errorf("%s: the room read what it hides:\n%s", c.name, out)
			case !c.hidden && !read:
				t.Errorf("%s: the room did not read the files it cannot hide (the test proves nothing):\n%s", c.name, out)
			}
			if data, err := os.ReadFile(key); err != nil || string(data) != "the engine key\n" {
				t.Errorf("%s: the key after the room: %q, %v", c.name, data, err)
			}
			if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
				t.Errorf("%s: the room wrote in a folder outside it", c.name)
			}
		}
		out, code := runConfined(t, Room{Writable: []string{room}, Hidden: []string{filepath.Dir(room)}, Namespaces: ns}, nil, "true")
		if code != ExitNoRoom || !strings.Contains(out, "it holds a path the room may write") {
			t.Errorf("a hidden folder holding the room: exit %d, want %d and why:\n%s", code, ExitNoRoom, out)
		}
	})
}
