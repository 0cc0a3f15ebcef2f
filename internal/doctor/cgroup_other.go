//go:build !linux

package doctor

func probeCgroup() Cgroup {
	return Cgroup{Note: "cgroup v2 and the supervisor need Linux: commands are started directly and tracked by their process group"}
}
