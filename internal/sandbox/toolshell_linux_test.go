//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// toolShellScript is what a CLI in a room does (the subshell, whose
// standard output is a pipe of the room's user, as the runner's is of
// the CLI's): a command it runs with plain sh, then one with the tool
// shell ($1), each writing into the CLI's standard output through
// /proc; then the tool shell writes in the room ($2) and reads the
// room's login shell.
const toolShellScript = `(
sh -c 'echo FORGED-SAME > /proc/$PPID/fd/1 && echo same: written || echo same: refused' 2>&1
"$1" -c 'echo FORGED-NESTED > /proc/$PPID/fd/1 && echo nested: written || echo nested: refused' 2>&1
"$1" -c 'touch "$1/made" && echo nested write: ok' sh "$2" 2>&1
echo "login shell: $(awk -F: -v u="$(id -u)" '$3 == u { print $7 }' /etc/passwd)"
) | cat`

// TestToolShellNests: a command the room's CLI starts through the tool
// shell cannot open the CLI's descriptors through /proc, which a command
// started with plain sh can; it still writes in the room. With
// namespaces and Room.ToolShell, the room's /etc/passwd names the tool
// shell as its user's login shell (read-only); the machine's is
// unchanged.
func TestToolShellNests(t *testing.T) {
	needLandlock(t)
	passwd, _ := os.ReadFile(passwdFile)
	check := func(t *testing.T, ns string) {
		work := mkdir(t)
		shell, remove, err := MakeToolShell(mkdir(t), testExe(t))
		if err != nil {
			t.Fatal(err)
		}
		defer remove()
		room := Room{Writable: []string{work}, ScopeSignals: true, Namespaces: ns, ToolShell: shell}
		out, code := runConfined(t, room, nil, "sh", "-c", toolShellScript, "sh", shell, work)
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		for _, want := range []string{"FORGED-SAME", "same: written", "nested: refused", "nested write: ok"} {
			if !strings.Contains(out, want) {
				t.Errorf("no %q in:\n%s", want, out)
			}
		}
		if strings.Contains(out, "FORGED-NESTED") || strings.Contains(out, "nested: written") {
			t.Errorf("a command of the tool shell wrote into its CLI's standard output:\n%s", out)
		}
		if _, err := os.Stat(filepath.Join(work, "made")); err != nil {
			t.Errorf("the tool shell's command could not write in the room: %v", err)
		}
		given := strings.Contains(out, "login shell: "+shell+"\n")
		if given != (ns != "") {
			t.Errorf("namespaces %q: login shell given %v:\n%s", ns, given, out)
		}
		if now, _ := os.ReadFile(passwdFile); string(now) != string(passwd) {
			t.Errorf("the machine's %s changed", passwdFile)
		}
	}
	t.Run("landlock", func(t *testing.T) { check(t, "") })
	nsModes(t, check)
}

// TestToolShellRefuses: the tool shell does not run a shell without its
// arguments, and a room whose writable paths hold it is reported.
func TestToolShellRefuses(t *testing.T) {
	var b strings.Builder
	if code := toolShell(nil, &b); code != ExitUsage || !strings.Contains(b.String(), "usage") {
		t.Errorf("no arguments: exit %d: %s", code, b.String())
	}
	parent := t.TempDir()
	shell, remove, err := MakeToolShell(parent, "/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	if data, _ := os.ReadFile(shell); string(data) != "#!"+filepath.Join(filepath.Dir(shell), "runner")+" "+ToolShellArg+"\n" {
		t.Errorf("script %q", data)
	}
	if !ToolShellReachable(Room{Writable: []string{parent}}, shell) {
		t.Error("a room that writes the tool shell's parent does not reach it")
	}
	if ToolShellReachable(Room{Writable: []string{t.TempDir()}}, shell) {
		t.Error("a room elsewhere reaches the tool shell")
	}
	for _, bad := range []string{"bash", "/tmp/a:b/bash"} {
		if (Room{ToolShell: bad}).Check() == nil {
			t.Errorf("tool shell %q is accepted", bad)
		}
	}
}

// TestWithShell: only the entries of the user id get the shell.
func TestWithShell(t *testing.T) {
	db := "root:x:0:0:root:/root:/bin/bash\nme:x:1000:1000::/home/me:/bin/zsh\nodd line\nnobody:x:65534:65534::/:/usr/sbin/nologin"
	got, found := withShell([]byte(db), 1000, "/t/bash")
	want := "root:x:0:0:root:/root:/bin/bash\nme:x:1000:1000::/home/me:/t/bash\nodd line\nnobody:x:65534:65534::/:/usr/sbin/nologin"
	if !found || string(got) != want {
		t.Errorf("withShell = %q, %v", got, found)
	}
	if _, found := withShell([]byte(db), 42, "/t/bash"); found {
		t.Error("found a user id that no entry names")
	}
}
