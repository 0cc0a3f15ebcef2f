package cli

import (
	"bytes"
	"context"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionOf(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	platform := " go1.26.0 " + runtime.GOOS + "/" + runtime.GOARCH
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"a checkout with changes",
			debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"},
				Settings: settings("vcs", "git", "vcs.revision", "0123456789abcdef0123", "vcs.time", "2026-03-01T02:00:00Z", "vcs.modified", "true")},
			"(devel) (revision 0123456789ab of 2026-03-01T02:00:00Z, with uncommitted changes)" + platform},
		{"a clean checkout",
			debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"},
				Settings: settings("vcs.revision", "abc123", "vcs.modified", "false")},
			"(devel) (revision abc123)" + platform},
		{"go install of a tag",
			debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.4.0"}},
			"v1.4.0" + platform},
		{"built without VCS information",
			debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}},
			"(devel) (revision unknown: built without VCS information)" + platform},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionOf(&tt.bi); got != tt.want {
				t.Errorf("versionOf = %q\n want %q", got, tt.want)
			}
		})
	}
}

func TestVersionFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Execute(context.Background(), []string{"--version"}, Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	if code != 0 {
		t.Fatalf("runner --version: exit %d: %s", code, errOut.String())
	}
	want := "runner " + version() + "\n"
	if out.String() != want || !strings.Contains(want, runtime.Version()) {
		t.Errorf("runner --version printed %q; want %q", out.String(), want)
	}
}
