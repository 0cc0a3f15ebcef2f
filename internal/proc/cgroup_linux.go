//go:build linux

package proc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// cgroup is the cgroup v2 of one supervised command: a child of the
// supervisor's own cgroup that the command is started into (clone3 with
// CLONE_INTO_CGROUP), so that every process it starts is in it too, until
// something with the right to move processes takes one out. Writing
// cgroup.kill (Linux 5.14) SIGKILLs them all at once, new forks included.
type cgroup struct {
	dir string // in the mounted cgroup2 hierarchy
	fd  int    // the open directory, for CLONE_INTO_CGROUP; -1 once closed
}

// cgroupPrefix starts the name of every cgroup a supervisor creates (see
// cgroupOwner).
const cgroupPrefix = "runner-"

// newCgroup creates a child of the calling process's cgroup v2.
func newCgroup(name string) (*cgroup, error) {
	parent, err := ownCgroupDir()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		// An empty one left by a killed supervisor whose pid this one got.
		if !errors.Is(err, fs.ErrExist) || unix.Rmdir(dir) != nil || os.Mkdir(dir, 0o755) != nil {
			return nil, fmt.Errorf("create cgroup: %w", err)
		}
	}
	cg := &cgroup{dir: dir, fd: -1}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		cg.remove()
		return nil, fmt.Errorf("cgroup %s has no cgroup.kill (Linux 5.14 or later is needed)", dir)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		cg.remove()
		return nil, fmt.Errorf("open cgroup %s: %w", dir, err)
	}
	cg.fd = fd
	return cg, nil
}

// kill sends SIGKILL to every process in the cgroup.
func (c *cgroup) kill() error {
	return writeCgroupFile(filepath.Join(c.dir, "cgroup.kill"), "1")
}

// procs lists the processes in the cgroup.
func (c *cgroup) procs() []int {
	return cgroupProcs(c.dir)
}

// populated reports whether a live process is in the cgroup. An
// unreadable cgroup counts as populated.
func (c *cgroup) populated() bool {
	return cgroupPopulated(c.dir)
}

// remove closes the directory and removes the cgroup, which only works
// once it is empty; a process that just died may keep it busy for a
// moment.
func (c *cgroup) remove() error {
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
	var err error
	for delay := time.Millisecond; delay < 200*time.Millisecond; delay *= 2 {
		if err = unix.Rmdir(c.dir); err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) {
			break
		}
		time.Sleep(delay)
	}
	return fmt.Errorf("remove cgroup %s: %w", c.dir, err)
}

func writeCgroupFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func cgroupProcs(dir string) []int {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range bytes.Fields(data) {
		if pid, err := strconv.Atoi(string(f)); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func cgroupPopulated(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist)
	}
	return !bytes.Contains(data, []byte("populated 0"))
}

// OwnCgroupDir returns the directory of the calling process's cgroup in
// the mounted cgroup2 hierarchy (for `runner doctor`, which checks what
// UseSupervisor would find without its side effects).
func OwnCgroupDir() (string, error) { return ownCgroupDir() }

// ownCgroupDir returns the directory of the calling process's cgroup in
// the mounted cgroup2 hierarchy.
func ownCgroupDir() (string, error) {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("find the cgroup2 mount: %w", err)
	}
	point, root, ok := cgroup2Mount(mi)
	if !ok {
		return "", errors.New("no cgroup2 file system is mounted")
	}
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("read own cgroup: %w", err)
	}
	own, ok := unifiedCgroup(cg)
	if !ok {
		return "", errors.New("/proc/self/cgroup names no cgroup v2")
	}
	return cgroupDir(point, root, own)
}

// cgroup2Mount returns where the cgroup2 hierarchy is mounted and which
// of its cgroups is the mount's root, from /proc/self/mountinfo: "ID
// PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE
// SUPEROPTIONS", with spaces in paths written as \040. Hosts with the
// hybrid layout mount it at /sys/fs/cgroup/unified, others at
// /sys/fs/cgroup.
func cgroup2Mount(mountinfo []byte) (point, root string, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i, s := range f {
			if s == "-" {
				sep = i
				break
			}
		}
		if sep < 6 || sep+1 >= len(f) || f[sep+1] != "cgroup2" {
			continue
		}
		return unescapeMount(f[4]), unescapeMount(f[3]), true
	}
	return "", "", false
}

// unescapeMount undoes the octal escapes (\040, \011, \012, \134) of a
// path in mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unifiedCgroup returns the cgroup v2 path of a /proc/PID/cgroup file: its
// "0::PATH" line.
func unifiedCgroup(data []byte) (string, bool) {
	for _, line := range strings.Split(string(data), "\n") {
		if path, ok := strings.CutPrefix(line, "0::"); ok && strings.HasPrefix(path, "/") {
			return path, true
		}
	}
	return "", false
}

// cgroupDir joins a cgroup's path to the mount point of the hierarchy,
// whose root is the cgroup mounted there.
func cgroupDir(point, root, cg string) (string, error) {
	rel := cg
	if root != "/" {
		r, ok := strings.CutPrefix(cg, root)
		if !ok || (r != "" && r[0] != '/') {
			return "", fmt.Errorf("own cgroup %s is outside the cgroup2 mount at %s (its root is %s)", cg, point, root)
		}
		rel = r
	}
	return filepath.Join(point, rel), nil
}
