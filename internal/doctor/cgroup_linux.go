//go:build linux

package doctor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// probeCgroup checks what internal/proc's UseSupervisor checks, without
// its side effects (it removes stale cgroups and starts a supervisor):
// the supervisor needs /proc/self/exe; each command's cgroup is a child
// of the runner's own cgroup v2, which must take a new child with
// cgroup.kill (Linux 5.14) and whose cgroup.procs must be writable. The
// child is made empty and removed at once; it is named as proc names its
// probes ("runner-PID-probe"), so a runner removes it should this process
// die in between.
func probeCgroup() Cgroup {
	if _, err := os.Stat("/proc/self/exe"); err != nil {
		return Cgroup{Note: fmt.Sprintf("no supervisor (%v): commands are started directly and tracked by their process group", err)}
	}
	dir, err := ownCgroupDir()
	c := Cgroup{Note: fmt.Sprint(err)}
	if err == nil {
		c = checkCgroupDir(dir)
	}
	if !c.OK {
		c.Note += "; the supervisor tracks each command's processes as their subreaper"
	}
	return c
}

// checkCgroupDir checks that a child cgroup of dir can be made and
// commands started in it.
func checkCgroupDir(dir string) Cgroup {
	child := filepath.Join(dir, "runner-"+strconv.Itoa(os.Getpid())+"-probe")
	if err := unix.Mkdir(child, 0o755); err != nil {
		return Cgroup{Dir: dir, Note: fmt.Sprintf("cannot make a cgroup in %s: %v", dir, err)}
	}
	_, kerr := os.Stat(filepath.Join(child, "cgroup.kill"))
	if err := unix.Rmdir(child); err != nil {
		return Cgroup{Dir: dir, Note: fmt.Sprintf("cannot remove the cgroup %s: %v", child, err)}
	}
	if kerr != nil {
		return Cgroup{Dir: dir, Note: fmt.Sprintf("the cgroups in %s have no cgroup.kill (Linux 5.14 or later is needed)", dir)}
	}
	if err := unix.Access(filepath.Join(dir, "cgroup.procs"), unix.W_OK); err != nil {
		return Cgroup{Dir: dir, Note: fmt.Sprintf("%s/cgroup.procs is not writable: %v", dir, err)}
	}
	return Cgroup{OK: true, Dir: dir}
}

// ownCgroupDir returns the directory of this process's cgroup in the
// mounted cgroup2 hierarchy (as internal/proc finds it).
func ownCgroupDir() (string, error) {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("find the cgroup2 mount: %w", err)
	}
	point, root, ok := cgroup2Mount(string(mi))
	if !ok {
		return "", errors.New("no cgroup2 file system is mounted")
	}
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("read own cgroup: %w", err)
	}
	own, ok := unifiedCgroup(string(cg))
	if !ok {
		return "", errors.New("/proc/self/cgroup names no cgroup v2")
	}
	rel := own
	if root != "/" {
		r, ok := strings.CutPrefix(own, root)
		if !ok || (r != "" && r[0] != '/') {
			return "", fmt.Errorf("own cgroup %s is outside the cgroup2 mount at %s (its root is %s)", own, point, root)
		}
		rel = r
	}
	return filepath.Join(point, rel), nil
}

// cgroup2Mount returns the mount point and root of the cgroup2 hierarchy
// in /proc/self/mountinfo ("ID PARENT MAJ:MIN ROOT POINT OPTIONS
// [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS", spaces written as \040).
func cgroup2Mount(mountinfo string) (point, root string, ok bool) {
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
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

// unescapeMount undoes the octal escapes of a path in mountinfo.
func unescapeMount(s string) string {
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

// unifiedCgroup returns the "0::PATH" line's path of /proc/self/cgroup.
func unifiedCgroup(data string) (string, bool) {
	for _, line := range strings.Split(data, "\n") {
		if path, ok := strings.CutPrefix(line, "0::"); ok && strings.HasPrefix(path, "/") {
			return path, true
		}
	}
	return "", false
}
