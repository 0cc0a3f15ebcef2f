// Package proc runs one external command the way the runner runs agents and
// guards: in its own process group, with its standard input written from a
// separate goroutine, its output streamed to a bounded log file (head and
// tail kept, the middle cut with a marker line), and a clean stop on
// timeout, idle timeout or cancellation: SIGTERM to the whole command, a
// grace period, then SIGKILL. The runner's memory stays bounded whatever
// the command prints, and the pipes are always drained. The bounded file
// (BoundedFile) is also what the executor keeps an agent's output in when
// it splits stdout from stderr.
//
// On Linux the runner starts each command under a supervisor (see
// UseSupervisor and supervise_linux.go): the runner binary in a hidden
// mode, its direct child, that is the child subreaper of everything the
// command starts, puts the command in a cgroup v2 of its own where it can
// create one, and stops all of it when the command is stopped, when it
// exits leaving something behind, and when the runner dies, even by
// SIGKILL. A supervisor runs the runner's commands one after another; it
// answers from this package's initializer, before the rest of the binary
// is initialised (supervise_init.go). Without the supervisor (other
// systems, or no /proc/self/exe) the command is the runner's own child,
// with the parent-death signal on Linux (strictly, it fires when the OS
// thread that started it ends, which Go only does for threads locked with
// runtime.LockOSThread), and only its process group is tracked. GroupsWithEnv finds, by environment, what
// escaped both, for a later runner to stop.
//
// A Spec with Confine set runs its command in a room (package sandbox):
// the runner's binary, started in its hidden __confine mode in the
// command's place, builds the room's walls and runs the command inside.
// With Landlock alone it executes the command in its place, which keeps
// its pid, group and cgroup (see UseConfinement); a room with namespaces
// is started in them (sandbox.Clone), the helper staying the command's
// parent, in its group and cgroup, and a room with MaxProcesses gets a
// cgroup pids.max from the supervisor (pidslimit_linux.go). Where that
// is not possible the command does not start. RoomLayers says what the
// machine gives a room.
//
// The package is for Unix systems only (process groups, signals); on other
// systems it is empty. The liveness of a process group is read from /proc
// on Linux, so that unreaped zombies do not count as alive.
package proc
