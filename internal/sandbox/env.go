package sandbox

import "strings"

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

// ScrubEnv returns env without the SocketVars (see there).
func ScrubEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if isSocketVar(k, v) {
			continue
		}
		out = append(out, kv)
	}
	return out
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
