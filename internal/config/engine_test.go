package config

import (
	"strings"
	"testing"
	"time"
)

func TestEngineDefaults(t *testing.T) {
	if cfg := mustParse(t, ""); cfg.Engine.On() {
		t.Errorf("no [engine] table: engine on: %+v", cfg.Engine)
	}
	cfg := mustParse(t, "[engine]\naddress = \"t.example:7233\"\nremote = \"/shared/r.git\"\n")
	want := Engine{Kind: EngineTemporal, Address: "t.example:7233", Namespace: "default", TaskQueue: "runner",
		Remote: "/shared/r.git", Parallel: 4, Heartbeat: Duration{30 * time.Second}}
	if cfg.Engine != want {
		t.Errorf("engine\n got %+v\nwant %+v", cfg.Engine, want)
	}
}

func TestEngineProblems(t *testing.T) {
	_, err := Parse("config.toml", []byte("[engine]\nkind = \"k8s\"\n"))
	if err == nil || !strings.Contains(err.Error(), "engine.kind") {
		t.Errorf("kind k8s: %v", err)
	}
	_, err = Parse("config.toml", []byte("[engine]\nparallel = 0\nheartbeat = \"0s\"\n"))
	for _, key := range []string{"engine.address", "engine.remote", "engine.parallel", "engine.heartbeat"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("want a problem at %s, got %v", key, err)
		}
	}
}

// A remote is a URL or an absolute path: a relative one would name a
// different folder on each machine.
func TestEngineRemote(t *testing.T) {
	for remote, ok := range map[string]bool{
		"/shared/r.git":               true,
		"ssh://git.example/r.git":     true,
		"https://git.example/r.git":   true,
		"file:///shared/r.git":        true,
		"git@git.example:team/r.git":  true,
		"git.example:r.git":           true,
		"r.git":                       false,
		"../shared/r.git":             false,
		"./r.git":                     false,
		"shared/dir:with-colon/r.git": false,
		"ext::sh -c touch% /tmp/x":    false,
		"fd::3":                       false,
	} {
		_, err := Parse("config.toml", []byte("[engine]\naddress = \"t.example:7233\"\nremote = \""+remote+"\"\n"))
		if got := err == nil; got != ok {
			t.Errorf("remote %q: error %v, want accepted %v", remote, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), "engine.remote") {
			t.Errorf("remote %q: %v does not name engine.remote", remote, err)
		}
	}
}

// The key file is a path of this machine's, absolute or in the home.
func TestEngineKeyFile(t *testing.T) {
	for key, ok := range map[string]bool{"~/.config/runner/engine.key": true, "/etc/runner/engine.key": true, "engine.key": false, "./k": false} {
		_, err := Parse("config.toml", []byte("[engine]\naddress = \"t.example:7233\"\nremote = \"/r.git\"\nkey_file = \""+key+"\"\n"))
		if got := err == nil; got != ok || err != nil && !strings.Contains(err.Error(), "engine.key_file") {
			t.Errorf("key_file %q: error %v, want accepted %v", key, err, ok)
		}
	}
}
