//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// closeSockets makes the path Unix sockets outside the room unreachable
// from it (connect(2) needs no write access, so read-only mounts do not
// stop it): every socket bound in the network namespace when the room is
// built (/proc/net/unix) is covered by /dev/null, and the folders where
// a session's sockets live are hidden by an empty read-only tmpfs, so
// that one made there later is out of reach too. open are the room's
// writable paths: what is inside them is the room's own, and a folder
// that holds one of them is not hidden.
func closeSockets(open []string) error {
	data, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return fmt.Errorf("list the sockets to close: %w", err)
	}
	for _, p := range socketPaths(data) {
		if !within(p, open) {
			if err := coverSocket(p); err != nil {
				return err
			}
		}
	}
	for _, d := range sessionSocketDirs(os.Getuid()) {
		if st, err := os.Stat(d); err != nil || !st.IsDir() || within(d, open) || holdsAny(d, open) {
			continue
		}
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0755"); err != nil {
			return fmt.Errorf("hide %s: %w", d, err)
		}
	}
	return nil
}

// socketPaths returns the paths of the sockets bound by path in a
// /proc/net/unix listing ("Num RefCount Protocol Flags Type St Inode
// Path", the path after one space; abstract ones start with '@').
func socketPaths(data []byte) []string {
	var paths []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		rest := sc.Text()
		ok := true
		for range 7 {
			rest = strings.TrimLeft(rest, " ")
			i := strings.IndexByte(rest, ' ')
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i:]
		}
		if p := strings.TrimPrefix(rest, " "); ok && strings.HasPrefix(p, "/") {
			paths = append(paths, p)
		}
	}
	return paths
}

// coverSocket mounts /dev/null over the socket at p, if p is one: a
// connection to it is then refused. The socket is opened first (O_PATH,
// not following a last link) and covered through its descriptor, so
// that what is covered is the socket found, whatever the path leads to
// by then. A path that does not lead to a socket the helper can reach is
// left alone: the room cannot reach it either.
func coverSocket(p string) error {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return nil
	}
	if err := unix.Mount("/dev/null", "/proc/self/fd/"+strconv.Itoa(fd), "", unix.MS_BIND, ""); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EACCES) {
			return nil
		}
		return fmt.Errorf("close the socket %s: %w", p, err)
	}
	return nil
}

// sessionSocketDirs are the folders where the sockets of uid's session
// live: its runtime folder (D-Bus, Wayland, gpg-agent, pipewire...),
// tmux's and screen's, ssh-agent's, the X server's.
func sessionSocketDirs(uid int) []string {
	u := strconv.Itoa(uid)
	tmux := os.Getenv("TMUX_TMPDIR")
	if tmux == "" {
		tmux = "/tmp"
	}
	dirs := []string{os.Getenv("XDG_RUNTIME_DIR"), "/run/user/" + u, filepath.Join(tmux, "tmux-"+u),
		"/run/screen", "/tmp/.X11-unix", "/tmp/.ICE-unix"}
	agents, _ := filepath.Glob("/tmp/ssh-*")
	var out []string
	for _, d := range append(dirs, agents...) {
		if filepath.IsAbs(d) {
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}
