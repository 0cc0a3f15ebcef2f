//go:build linux

package doctor

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// landlockABI asks the kernel for its Landlock ABI version,
// landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION), and
// from ABI 6 on for the errata it fixed (..._ERRATA; 0 when it cannot
// say).
func landlockABI() (abi, errata int, err error) {
	r, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, 0, errno
	}
	if abi = int(r); abi >= ScopeLandlockABI {
		if r, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_ERRATA); errno == 0 {
			errata = int(r)
		}
	}
	return abi, errata, nil
}

// activeLSMs lists the security modules the kernel runs, "" when it
// cannot be read (securityfs not mounted, or not readable).
func activeLSMs() string {
	data, err := os.ReadFile("/sys/kernel/security/lsm")
	if err != nil || len(data) > 4096 {
		return ""
	}
	return strings.TrimSpace(string(data))
}
