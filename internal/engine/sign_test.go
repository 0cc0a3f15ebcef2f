package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"

	executor "github.com/runner-cli/runner/internal/exec"
	"github.com/runner-cli/runner/internal/iteration"
	"github.com/runner-cli/runner/internal/state"
)

// An input opens with the key it was signed with, for the workflow it
// was signed for; unsigned, signed with another key, changed, or
// submitted under another workflow's id, it does not.
func TestInputSignature(t *testing.T) {
	in := Input{Run: "r1", Iteration: 7, Node: "a", Attempt: 2, Config: []byte("[executor]\npreset = \"command\"\n"), Prompt: []byte("<do> & \"this\" \u2028")}
	s, err := testKey.SignInput(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := testKey.OpenInput("runner-r1-7", s)
	if err != nil || got.Node != "a" || string(got.Prompt) != string(in.Prompt) {
		t.Fatalf("signed: %+v, %v", got, err)
	}

	unsigned, _ := Key(nil).SignInput(in)
	other, _ := Key("another key, of 32 bytes or more, really").SignInput(in)
	changed := *s
	changed.Body = []byte(strings.Replace(string(s.Body), `"Node":"a"`, `"Node":"b"`, 1))
	for _, c := range []struct {
		name string
		id   string
		s    *Signed
		want error
	}{
		{"unsigned", "runner-r1-7", unsigned, ErrUnsigned},
		{"another key", "runner-r1-7", other, ErrBadSignature},
		{"changed", "runner-r1-7", &changed, ErrBadSignature},
		{"another workflow", "runner-r1-8", s, ErrBadSignature},
	} {
		if _, err := testKey.OpenInput(c.id, c.s); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if err := inputRefusal(testKey.open(purposeInput, c.id, c.s, &Input{})); !isRefused(err) {
			t.Errorf("%s: not a refusal: %v", c.name, err)
		}
	}
	// Signed for its own id, but not the iteration that id names.
	moved, _ := testKey.sign(purposeInput, "runner-r1-9", in)
	if _, err := testKey.OpenInput("runner-r1-9", moved); err == nil || !strings.Contains(err.Error(), "runner-r1-7") {
		t.Errorf("an input of another iteration: %v", err)
	}
	// Without a key nothing can be checked: the worker is unprotected.
	if _, err := Key(nil).OpenInput("runner-r1-7", unsigned); err != nil {
		t.Errorf("no key: %v", err)
	}
}

// An output opens on the coordinator only with the worker's MAC for that
// workflow, task and attempt; anything else is Unverified, and a lost
// iteration (Lost) whose reason says so.
func TestOutputSignature(t *testing.T) {
	in := Input{Run: "r1", Iteration: 7, Node: "a", Attempt: 2}
	out := &Output{Worker: "w1", Result: "abc", Agent: &executor.Result{Class: executor.ClassOK, Message: &executor.Message{Status: "done"}},
		Judgement: &iteration.Judgement{Verdict: state.GuardPass}, Files: map[string][]byte{"guard.log": []byte("ok <&>\n")}}
	s, err := testKey.signOutput("runner-r1-7", in, out)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := testKey.OpenOutput("runner-r1-7", "a", 2, s); err != nil || got.Result != "abc" || string(got.Files["guard.log"]) != "ok <&>\n" {
		t.Fatalf("signed: %+v, %v", got, err)
	}
	forged, _ := Key(nil).signOutput("runner-r1-7", in, out)
	other, _ := Key("another key, of 32 bytes or more, really").signOutput("runner-r1-7", in, out)
	for _, c := range []struct {
		name          string
		id, node      string
		attempt       int
		s             *Signed
		wantInMessage string
	}{
		{"unsigned", "runner-r1-7", "a", 2, forged, "not signed"},
		{"another key", "runner-r1-7", "a", 2, other, "does not verify"},
		{"another iteration's", "runner-r1-8", "a", 2, s, "does not verify"},
		{"another attempt's", "runner-r1-7", "a", 3, s, "attempt 2, not a, attempt 3"},
	} {
		_, err := testKey.OpenOutput(c.id, c.node, c.attempt, c.s)
		if !Unverified(err) || !Lost(err) || !strings.Contains(err.Error(), c.wantInMessage) {
			t.Errorf("%s: %v; want an unverified result saying %q", c.name, err, c.wantInMessage)
		}
		if why := Why(err); !strings.Contains(why, "its result was refused") || !strings.Contains(why, "another key") {
			t.Errorf("%s: Why = %q", c.name, why)
		}
	}
}

// What is signed reaches the other side byte for byte through Temporal's
// data converter: the MAC is checked on the bytes the worker receives.
func TestSignedSurvivesTheDataConverter(t *testing.T) {
	in := Input{Run: "r", Iteration: 1, Node: "n", Prompt: []byte("a <b> & c \u2028 é \x00"), Config: []byte("x = \"<&>\"\n"),
		Baseline: &state.Baseline{Key: "k", At: time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))}, Timeout: time.Hour}
	s, err := testKey.SignInput(in)
	if err != nil {
		t.Fatal(err)
	}
	dc := converter.GetDefaultDataConverter()
	p, err := dc.ToPayload(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Signed
	if err := dc.FromPayload(p, &back); err != nil {
		t.Fatal(err)
	}
	if string(back.Body) != string(s.Body) {
		t.Fatalf("the body changed on its way:\n%s\n%s", s.Body, back.Body)
	}
	if _, err := testKey.OpenInput("runner-r-1", &back); err != nil {
		t.Error(err)
	}
}

// A key file is read trimmed, and refused when short, readable by
// others, or missing, each saying how to make one.
func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	good := write("good", "  "+strings.Repeat("k", 44)+"\n", 0o600)
	if k, err := LoadKey(good); err != nil || string(k) != strings.Repeat("k", 44) {
		t.Errorf("good key: %q, %v", k, err)
	}
	for name, c := range map[string]struct {
		path, want string
	}{
		"short":    {write("short", "abc\n", 0o600), "fewer than 32"},
		"readable": {write("readable", strings.Repeat("k", 44), 0o644), "chmod 600"},
		"missing":  {filepath.Join(dir, "none"), "head -c 32 /dev/urandom"},
		"a folder": {dir, "not a regular file"},
	} {
		if _, err := LoadKey(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, c.want)
		}
	}
	t.Setenv(KeyEnv, good)
	if p, err := KeyPath("~/elsewhere"); err != nil || p != good {
		t.Errorf("KeyPath with %s set: %q, %v", KeyEnv, p, err)
	}
	t.Setenv(KeyEnv, "")
	if _, err := KeyPath("relative/key"); err == nil {
		t.Error("a relative key path was taken")
	}
	if err := CheckKeyPlace(filepath.Join(dir, "repo", "k"), filepath.Join(dir, "repo"), nil); err == nil || !strings.Contains(err.Error(), "inside the repository") {
		t.Errorf("a key in the repository: %v", err)
	}
	if err := CheckKeyPlace("/home/u/.cache/k", "", []string{"/home/u/.cache"}); err == nil || !strings.Contains(err.Error(), "room may write") {
		t.Errorf("a key in a room's writable path: %v", err)
	}
	if err := CheckKeyPlace("/home/u/.config/runner/k", "/home/u/src", []string{"/home/u/.cache"}); err != nil {
		t.Errorf("a key in its place: %v", err)
	}
}

// BenchmarkSignAndOpen signs an input with a 40 KB prompt and opens it,
// then an output with 1.5 MiB of run folder files (the bound collectFiles
// keeps to): the cost the engine key adds to each iteration, on each side.
func BenchmarkSignAndOpen(b *testing.B) {
	in := Input{Run: "r1", Iteration: 7, Node: "a", Prompt: []byte(strings.Repeat("prompt text ", 40<<10/12)), Config: []byte(strings.Repeat("k = 1\n", 300))}
	out := &Output{Worker: "w", Files: map[string][]byte{"executor.log": []byte(strings.Repeat("log line\n", filesLimit/9))}}
	b.Run("input", func(b *testing.B) {
		for b.Loop() {
			s, _ := testKey.SignInput(in)
			if _, err := testKey.OpenInput("runner-r1-7", s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("output", func(b *testing.B) {
		for b.Loop() {
			s, _ := testKey.signOutput("runner-r1-7", in, out)
			if _, err := testKey.OpenOutput("runner-r1-7", "a", 0, s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
