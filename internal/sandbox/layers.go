package sandbox

import "fmt"

// Layers is what a machine gives a room, layer by layer (SPEC §19), as
// the runner finds it when a run starts (package proc probes it): each
// layer, or why it is missing.
type Layers struct {
	// Landlock is the ABI the room is confined with; 0: none, and the
	// room cannot be built at all (NoLandlock says why).
	Landlock   int    `json:"landlock"`
	NoLandlock string `json:"no_landlock,omitempty"`
	// Namespaces are those the room's walls are built in
	// (NamespacesUser, NamespacesRoot); "": none, NoNamespaces says why.
	Namespaces   string `json:"namespaces,omitempty"`
	NoNamespaces string `json:"no_namespaces,omitempty"`
	// ProcessLimit says what bounds a room's processes ("cgroup v2
	// pids.max", "RLIMIT_NPROC in the room's user namespace"...); "":
	// nothing, NoProcessLimit says why. ByConfig: by the configuration's
	// choice (sandbox.max_processes = 0), not the machine's.
	ProcessLimit   string `json:"process_limit,omitempty"`
	NoProcessLimit string `json:"no_process_limit,omitempty"`
	ByConfig       bool   `json:"by_config,omitempty"`
}

// Landlock ABIs that close more.
const (
	// ScopeABI scopes signals and abstract Unix sockets to the room.
	ScopeABI = 6
	// SocketABI scopes path Unix sockets to the room.
	SocketABI = 9
)

// Layer is one layer of a room and what it closes, for `runner doctor`.
type Layer struct {
	Name   string `json:"name"`
	Closes string `json:"closes"`
	// By says what gives it here; "" when it is missing, and Missing
	// says why.
	By      string `json:"by,omitempty"`
	Missing string `json:"missing,omitempty"`
}

// List is every layer, in order: Landlock, the namespaces, the process
// limit, the path sockets' scoping, the tool commands' nested layer.
func (l Layers) List() []Layer {
	ll := Layer{Name: "landlock", Closes: "writes outside the room; from ABI 6 signals to, and abstract sockets of, processes outside it"}
	if l.Landlock > 0 {
		ll.By = fmt.Sprintf("Landlock ABI %d", l.Landlock)
		if l.Landlock < ScopeABI {
			ll.By += fmt.Sprintf(" (signals and abstract sockets are scoped from ABI %d)", ScopeABI)
		}
	} else {
		ll.Missing = l.NoLandlock
	}
	ns := Layer{Name: "namespaces", Closes: "chmod, chown and utime outside the room (read-only mounts); the worktree's .git file; the runner's /proc (a PID namespace); the engine key (hidden)"}
	switch l.Namespaces {
	case NamespacesUser:
		ns.By = "user, mount and PID namespaces"
	case NamespacesRoot:
		ns.By = "mount and PID namespaces (as root, every capability dropped)"
	default:
		ns.Missing = l.NoNamespaces
	}
	pl := Layer{Name: "process limit", Closes: "a fork flood beyond the room (sandbox.max_processes)", By: l.ProcessLimit, Missing: l.NoProcessLimit}
	so := Layer{Name: "path sockets", Closes: "Unix sockets outside the room: tmux, ssh-agent, docker, D-Bus"}
	switch {
	case l.Landlock >= SocketABI:
		so.By = fmt.Sprintf("Landlock ABI %d", l.Landlock)
	case l.Namespaces != "":
		so.By = "covered and hidden in the room's mount namespace"
	default:
		so.Missing = fmt.Sprintf("no mount namespace, and Landlock scopes them from ABI %d", SocketABI)
	}
	tc := Layer{Name: "tool commands", Closes: "the CLI's descriptors, its output to the runner among them, from the commands it runs for its model (a Landlock layer nested in the CLI's)"}
	switch {
	case l.Landlock < 1:
		tc.Missing = l.NoLandlock
	case l.Namespaces != "":
		tc.By = "the tool shell: claude's CLAUDE_CODE_SHELL, codex's login shell in the room's /etc/passwd"
	default:
		tc.By = "the tool shell, for claude only (CLAUDE_CODE_SHELL): codex takes its user's login shell, which the room names in a mount namespace only"
	}
	return []Layer{ll, ns, pl, so, tc}
}

// Openings are what a room built with l leaves open, each with why; none
// when every layer stands. Without Landlock there is no room at all,
// which the run says otherwise.
func (l Layers) Openings() []string {
	if l.Landlock < 1 {
		return nil
	}
	var out []string
	if l.Landlock < ScopeABI {
		out = append(out, fmt.Sprintf("signals to, and abstract sockets of, processes outside the room (Landlock ABI %d scopes them from %d)", l.Landlock, ScopeABI))
	}
	if l.Namespaces == "" {
		why := l.NoNamespaces
		out = append(out, "chmod, chown and utime outside the room (no namespaces: "+why+")",
			"the runner's /proc, its environment and every process (no PID namespace)",
			"the worktree's .git file (put back after each run instead)",
			"codex's standard output, the runner's event stream, from the commands codex runs (its tool shell needs a mount namespace)")
		if l.Landlock < SocketABI {
			out = append(out, fmt.Sprintf("path sockets outside the room: tmux, ssh-agent, docker, D-Bus (no mount namespace; Landlock scopes them from ABI %d)", SocketABI))
		}
	}
	if l.ProcessLimit == "" {
		out = append(out, "no process limit: a fork flood reaches the other slots and the machine ("+l.NoProcessLimit+")")
	}
	return out
}

// Missing reports whether a layer the machine should give is missing
// (not left out by the configuration): sandbox.mode = "required" then
// refuses to run. Landlock's missing signal scoping (ABI 6) does not
// count, as before namespaces.
func (l Layers) Missing() bool {
	return l.Landlock < 1 || l.Namespaces == "" || l.ProcessLimit == "" && !l.ByConfig
}
