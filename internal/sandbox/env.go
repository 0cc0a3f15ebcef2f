package sandbox

import (
	"slices"
	"strings"
)

// SocketVars are the environment variables that name a Unix socket (or
// the folder of sockets) of the session outside a room, through which a
// program in the room could have something run outside it: a terminal
// multiplexer's, an ssh or gpg agent's, D-Bus's, a display server's.
// ScrubEnv leaves them out; DOCKER_HOST and CONTAINER_HOST only when they
// name a socket path (a tcp:// one is the network, which a room does not
// restrict).
var SocketVars = []string{
	"TMUX", "TMUX_PANE", "STY",
	"SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO",
	"DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS",
	"XDG_RUNTIME_DIR", "WAYLAND_DISPLAY",
	"DOCKER_HOST", "CONTAINER_HOST",
}

// EngineKeyVar names the engine key's file on a machine (SPEC §22), a
// secret the coordinator and the workers read outside every room.
const EngineKeyVar = "RUNNER_ENGINE_KEY_FILE"

// SecretVars are the variables of the runner's own secrets: no program
// the runner starts for an agent, a guard, the reviewer, git.setup or
// plan gets them, confined or not (WithoutSecrets), as no room reads the
// file they name (Room.Hidden).
var SecretVars = []string{EngineKeyVar}

// ScrubEnv returns env without the SocketVars (see there) and the
// SecretVars.
func ScrubEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if isSocketVar(k, v) || slices.Contains(SecretVars, k) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// WithoutSecrets returns env without the SecretVars.
func WithoutSecrets(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(SecretVars, k)
	})
}

func isSocketVar(k, v string) bool {
	switch k {
	case "DOCKER_HOST", "CONTAINER_HOST":
		return strings.HasPrefix(v, "unix:") || strings.HasPrefix(v, "/")
	}
	for _, s := range SocketVars {
		if k == s {
			return true
		}
	}
	return false
}
