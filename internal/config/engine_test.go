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
