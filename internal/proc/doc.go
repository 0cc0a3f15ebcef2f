// Package proc runs one external command the way the runner runs agents and
// guards: in its own process group, with its standard input written from a
// separate goroutine, its output streamed to a bounded log file (head and
// tail kept, the middle cut with a marker line), and a clean stop on
// timeout, idle timeout or cancellation: SIGTERM to the whole group, a
// grace period, then SIGKILL. The runner's memory stays bounded whatever
// the command prints, and the pipes are always drained. The bounded file
// (BoundedFile) is also what the executor keeps an agent's output in when
// it splits stdout from stderr.
//
// The package is for Unix systems only (process groups, signals); on other
// systems it is empty. On Linux the child also gets SIGKILL if the runner
// dies (Pdeathsig; strictly, when the OS thread that started it ends, which
// Go only does for threads locked with runtime.LockOSThread), and the
// liveness of a process group is read from /proc so that unreaped zombies
// do not count as alive.
package proc
