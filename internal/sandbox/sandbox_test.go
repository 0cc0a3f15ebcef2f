package sandbox

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestWrapRoundTrip(t *testing.T) {
	room := Room{
		Writable:      []string{"/tmp/a dir", `/tmp/"quoted"`},
		WritableFiles: []string{"/home/u/.claude.json"},
		ScopeSignals:  true,
	}
	argv := []string{"sh", "-c", "echo -- \"$@\"", "--", "x"}
	w := Wrap("/path/to/runner", room, argv)
	if w[0] != "/path/to/runner" || w[1] != ConfineArg || w[3] != "--" {
		t.Fatalf("Wrap = %q", w)
	}
	gotRoom, gotArgv, err := parseArgs(w[2:])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotRoom, room) || !reflect.DeepEqual(gotArgv, argv) {
		t.Fatalf("parseArgs(Wrap) = %+v %q, want %+v %q", gotRoom, gotArgv, room, argv)
	}
}

// TestConfineBadArgs: Confine refuses, with a message and a non-zero
// status, whatever it cannot read; none of these gets as far as the
// restriction, so they run in the test process.
func TestConfineBadArgs(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"none", nil, ExitUsage, "usage: runner __confine <room json> -- program"},
		{"no command", []string{"{}", "--"}, ExitUsage, "usage:"},
		{"no separator", []string{"{}", "true"}, ExitUsage, "usage:"},
		{"separator missing", []string{"{}", "true", "x"}, ExitUsage, "usage:"},
		{"bad json", []string{"{", "--", "true"}, ExitUsage, "bad room"},
		{"two values", []string{"{} {}", "--", "true"}, ExitUsage, "more than one JSON value"},
		{"unknown field", []string{`{"writable":["/tmp"],"readonly":["/"]}`, "--", "true"}, ExitUsage, `unknown field "readonly"`},
		{"relative path", []string{`{"writable":["tmp"]}`, "--", "true"}, ExitUsage, `writable path "tmp" is not absolute`},
		{"empty program", []string{`{}`, "--", ""}, ExitUsage, "no program given"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := confine(c.args, &stderr)
			if code != c.code || !strings.HasPrefix(stderr.String(), "runner __confine: ") || !strings.Contains(stderr.String(), c.msg) {
				t.Fatalf("confine(%q) = %d, %q; want %d and %q", c.args, code, stderr.String(), c.code, c.msg)
			}
		})
	}
}

var errTestNoLandlock = errors.New("no Landlock in this test")

// TestConfineNoLandlock: without Landlock, Confine fails rather than run
// the command unconfined (were it run, the test binary would be replaced
// by true).
func TestConfineNoLandlock(t *testing.T) {
	defer func(f func() (int, error)) { abiFunc = f }(abiFunc)
	abiFunc = func() (int, error) { return 0, errTestNoLandlock }
	var stderr bytes.Buffer
	code := confine([]string{"{}", "--", "true"}, &stderr)
	if code != ExitNoRoom || !strings.Contains(stderr.String(), "cannot confine true: "+errTestNoLandlock.Error()) {
		t.Fatalf("confine = %d, %q", code, stderr.String())
	}
}

// TestScrubEnv: the variables naming a socket outside the room are left
// out, DOCKER_HOST only when it names one, and so is the engine key's;
// the rest passes.
func TestScrubEnv(t *testing.T) {
	in := []string{"PATH=/bin", "TMUX=/tmp/tmux-0/default,1,0", "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1",
		"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus", "XDG_RUNTIME_DIR=/run/user/0",
		"DOCKER_HOST=unix:///var/run/docker.sock", "CONTAINER_HOST=/run/podman/podman.sock", "HOME=/root"}
	want := []string{"PATH=/bin", "HOME=/root"}
	if got := ScrubEnv(in); !reflect.DeepEqual(got, want) {
		t.Errorf("ScrubEnv = %q, want %q", got, want)
	}
	secret := []string{"PATH=/bin", EngineKeyVar + "=/etc/runner/engine.key"}
	if got := ScrubEnv(secret); !reflect.DeepEqual(got, secret[:1]) {
		t.Errorf("ScrubEnv(%q) = %q: the engine key's variable passed", secret, got)
	}
	if got := WithoutSecrets(append(in[:1:1], secret[1], "TMUX=/tmp/tmux-0/default,1,0")); !reflect.DeepEqual(got, []string{"PATH=/bin", "TMUX=/tmp/tmux-0/default,1,0"}) {
		t.Errorf("WithoutSecrets = %q, want everything but the engine key's variable", got)
	}
	tcp := []string{"DOCKER_HOST=tcp://build:2376"}
	if got := ScrubEnv(tcp); !reflect.DeepEqual(got, tcp) {
		t.Errorf("ScrubEnv(%q) = %q", tcp, got)
	}
}
