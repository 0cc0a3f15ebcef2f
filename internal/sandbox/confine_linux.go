//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// ABI returns the Landlock ABI version the kernel offers, as go-landlock
// uses it (a 6 whose signal scoping has a known bug counts as 5), or 0
// and why there is none.
func ABI() (int, error) {
	v, err := llsys.LandlockGetABIVersion()
	switch {
	case errors.Is(err, syscall.ENOSYS):
		return 0, errors.New("the kernel has no Landlock (Linux 5.13 or later built with CONFIG_SECURITY_LANDLOCK is needed)")
	case errors.Is(err, syscall.EOPNOTSUPP):
		return 0, errors.New("Landlock is disabled on this kernel (it is enabled with landlock in the lsm= boot parameter)")
	case err != nil:
		return 0, fmt.Errorf("Landlock is not available: %w", err)
	case v < 1:
		return 0, fmt.Errorf("Landlock is not available: ABI version %d", v)
	}
	if v >= 6 {
		// go-landlock's rule: without the fix for the signal scoping
		// bug (errata 2), it uses ABI 5.
		if errata, err := llsys.LandlockGetErrata(); err != nil || errata&0x2 == 0 {
			v = 5
		}
	}
	return v, nil
}

// abiFunc is ABI, replaced by tests.
var abiFunc = ABI

// devices are the device files every confined command may write (reads
// are allowed everywhere), with their ioctls where a terminal needs them.
var (
	plainDevices    = []string{"/dev/null", "/dev/zero"}
	terminalDevices = []string{"/dev/tty", "/dev/ptmx", "/dev/pts"}
)

// confine is Confine, writing its messages to stderr.
func confine(args []string, stderr io.Writer) int {
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "runner %s: %s\n", ConfineArg, fmt.Sprintf(format, a...))
		return code
	}
	room, argv, err := parseArgs(args)
	if err != nil {
		return fail(ExitUsage, "%v", err)
	}
	abi, err := abiFunc()
	if abi < 1 {
		return fail(ExitNoRoom, "cannot confine %s: %v", argv[0], err)
	}
	var made []string
	var sigs <-chan os.Signal
	var caught <-chan struct{}
	if room.Namespaces != "" {
		if os.Getpid() != 1 {
			return fail(ExitNoRoom, "cannot confine %s: the room asks for namespaces, and the helper was not started in them (see sandbox.Clone)", argv[0])
		}
		if !room.Probe {
			sigs, caught = notifyInit()
		}
		// Capabilities are the thread's: the one that drops them forks
		// the command.
		runtime.LockOSThread()
		if made, err = buildWalls(room); err != nil {
			return fail(ExitNoRoom, "cannot confine %s: %v", argv[0], err)
		}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		code := ExitNoExec
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = ExitNotFound
		}
		return fail(code, "%v", err)
	}
	rules, notes := roomRules(room, abi, made)
	for _, n := range notes {
		fmt.Fprintf(stderr, "runner %s: note: %s\n", ConfineArg, n)
	}
	if err := roomConfig(room).BestEffort().Restrict(rules...); err != nil {
		return fail(ExitNoRoom, "cannot confine %s: %v", argv[0], err)
	}
	env := ScrubEnv(os.Environ())
	if room.Namespaces != "" {
		if caught != nil {
			<-caught
		}
		code, err := runInit(room, path, argv, env, sigs)
		if err != nil {
			return fail(ExitNoRoom, "cannot confine %s: %v", argv[0], err)
		}
		return code
	}
	if room.Probe {
		return 0
	}
	err = syscall.Exec(path, argv, env)
	code := ExitNoExec
	if errors.Is(err, syscall.ENOENT) {
		code = ExitNotFound
	}
	return fail(code, "exec %s: %v", path, err)
}

// roomConfig is the strictest configuration go-landlock knows for files
// (and, with ScopeSignals, IPC scopes); BestEffort brings it down to what
// the kernel supports. The network is not restricted.
func roomConfig(room Room) landlock.Config {
	c := landlock.Config{HandledAccessFS: landlock.V11.HandledAccessFS}
	if room.ScopeSignals {
		c.Scoped = landlock.V11.Scoped
	}
	return c
}

// roomRules returns the rules granting what room allows (and made, the
// directories the helper made for it), and notes on the paths left out
// because they do not exist (or cannot be read).
func roomRules(room Room, abi int, made []string) ([]landlock.Rule, []string) {
	var dirs, files []string
	var notes []string
	add := func(p string) {
		st, err := os.Stat(p)
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("%s is not writable: %v", p, err))
		case st.IsDir():
			dirs = append(dirs, p)
		default:
			files = append(files, p)
		}
	}
	for _, p := range room.Writable {
		add(p)
	}
	for _, p := range room.WritableFiles {
		add(p)
	}
	dirs = append(dirs, made...)
	rules := []landlock.Rule{
		// Read and execute everywhere.
		landlock.RODirs("/"),
		landlock.RWFiles(plainDevices...).IgnoreIfMissing(),
		landlock.RWFiles(terminalDevices...).WithIoctlDev().IgnoreIfMissing(),
	}
	if len(dirs) > 0 {
		rw := landlock.RWDirs(dirs...)
		if abi >= 2 {
			// Moving and linking between the room's directories.
			// (Asked on ABI 1, go-landlock's best effort would
			// drop every rule instead.)
			rw = rw.WithRefer()
		}
		rules = append(rules, rw)
	}
	if len(files) > 0 {
		rules = append(rules, landlock.RWFiles(files...))
	}
	return rules, notes
}
