package doctor

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// MinLandlockABI is the oldest Landlock ABI the runner confines with
// (file access); ScopeLandlockABI is the one that also scopes signals and
// abstract unix sockets to the agent's room.
const (
	MinLandlockABI   = 1
	ScopeLandlockABI = 6
)

// Landlock is what the kernel's Landlock supports.
type Landlock struct {
	// ABI is the version the runner confines with; 0: none. It is
	// KernelABI, but 5 where the kernel's 6 or later lacks the fix of its
	// signal scoping (errata 2), as go-landlock has it.
	ABI int `json:"abi"`
	// KernelABI is the version landlock_create_ruleset reports, Errata
	// the errata it says are fixed (asked from ABI 6 on).
	KernelABI int `json:"kernel_abi"`
	Errata    int `json:"errata"`
	// Features are what the ABI can restrict, from landlockFeatures.
	Features []string `json:"features,omitempty"`
	// Summary is what the ABI gives the runner, in one phrase.
	Summary string `json:"summary,omitempty"`
	// Why says why there is none (ABI 0), Hint what would change it.
	Why  string `json:"why,omitempty"`
	Hint string `json:"hint,omitempty"`
}

// Confines reports whether the runner can confine commands with it.
func (l Landlock) Confines() bool { return l.ABI >= MinLandlockABI }

// landlockFeatures are what each ABI version adds, in order.
var landlockFeatures = [][]string{
	1: {"fs"},                                    // reading, writing, executing, making and removing files
	2: {"fs_refer"},                              // linking and renaming across folders
	3: {"fs_truncate"},                           // truncating files
	4: {"net_tcp"},                               // binding and connecting TCP ports
	5: {"fs_ioctl_dev"},                          // ioctl on devices
	6: {"scope_signal", "scope_abstract_socket"}, // signals and abstract unix sockets
	7: {"logging"},                               // denials logged by the audit subsystem
}

// landlockSummary is what ABI v gives the runner, in one phrase.
func landlockSummary(v int) string {
	notScoped := fmt.Sprintf("signals and abstract sockets are not scoped (ABI %d)", ScopeLandlockABI)
	switch {
	case v <= 0:
		return ""
	case v <= 2:
		return "file access only; " + notScoped
	case v == 3:
		return "file access and truncation; " + notScoped
	case v == 4:
		return "file access and TCP ports; " + notScoped
	case v == 5:
		return "file access, TCP ports and device ioctls; " + notScoped
	case v == 6:
		return "signals and abstract sockets can be scoped"
	case v == 7:
		return "signals and abstract sockets can be scoped; denials can be logged"
	}
	return "newer than the runner knows: signals and abstract sockets can be scoped, denials logged, and more"
}

// scopeErrata is the Landlock erratum that fixed signal scoping; a
// kernel without it is used as ABI 5.
const scopeErrata = 0x2

// landlockFrom reads the result of the Landlock probe.
func landlockFrom(kernel, errata int, err error) Landlock {
	if err == nil && kernel > 0 {
		abi := kernel
		if abi >= ScopeLandlockABI && errata&scopeErrata == 0 {
			abi = ScopeLandlockABI - 1
		}
		l := Landlock{ABI: abi, KernelABI: kernel, Errata: errata, Summary: landlockSummary(abi)}
		for v := 1; v <= abi && v < len(landlockFeatures); v++ {
			l.Features = append(l.Features, landlockFeatures[v]...)
		}
		return l
	}
	switch {
	case err == nil:
		return Landlock{Why: "the kernel reports no Landlock ABI"}
	case errors.Is(err, errNotLinux):
		return Landlock{Why: "Landlock is Linux only"}
	case errors.Is(err, syscall.ENOSYS):
		return Landlock{Why: "the kernel has no Landlock",
			Hint: "landlock_create_ruleset: ENOSYS; Landlock needs Linux 5.13 or later, built with CONFIG_SECURITY_LANDLOCK"}
	case errors.Is(err, syscall.EOPNOTSUPP):
		hint := "landlock_create_ruleset: EOPNOTSUPP; add landlock to the lsm= boot parameter"
		if lsm := activeLSMs(); lsm != "" {
			hint += " (now active: " + lsm + ")"
		}
		return Landlock{Why: "Landlock is disabled at boot", Hint: hint}
	case errors.Is(err, syscall.EPERM):
		return Landlock{Why: "Landlock is blocked",
			Hint: "landlock_create_ruleset: EPERM; a seccomp filter (a container's) forbids it"}
	}
	return Landlock{Why: "Landlock cannot be used", Hint: "landlock_create_ruleset: " + strings.TrimSpace(err.Error())}
}

// errNotLinux is the Landlock probe's error outside Linux.
var errNotLinux = errors.New("not Linux")
