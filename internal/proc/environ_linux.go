//go:build linux

package proc

import (
	"errors"
	"io"
	"os"
	"strconv"
)

// maxEnviron bounds what ReadEnviron reads: more than the kernel lets a
// process be started with (ARG_MAX is a quarter of the stack limit, 2 MiB
// by default, for the arguments and the environment together).
const maxEnviron = 16 << 20

// ReadEnviron returns the environment process pid was started with
// (/proc/PID/environ: NAME=value entries, each ended by a NUL), read in
// one read(2) so that the kernel copies it whole from one address space.
// Read in several calls, as os.ReadFile does, it can come out cut short:
// the file reads the address space of the program the process ran when
// the file was opened, which is gone once the process executes another
// program, and later reads find the end of the file. buf's storage, when
// large enough, holds the result (pass the last result to reuse it);
// otherwise a larger one is made. A process
// that is exiting or in the middle of executing a program reads empty.
func ReadEnviron(pid int, buf []byte) ([]byte, error) {
	buf = buf[:cap(buf)]
	if len(buf) < 64<<10 {
		buf = make([]byte, 64<<10)
	}
	for {
		f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil {
			return nil, err
		}
		n, err := f.Read(buf)
		f.Close()
		if errors.Is(err, io.EOF) {
			return buf[:0], nil
		}
		if err != nil {
			return nil, err
		}
		if n < len(buf) {
			return buf[:n], nil
		}
		if len(buf) >= maxEnviron {
			return nil, errors.New("/proc/" + strconv.Itoa(pid) + "/environ: longer than " + strconv.Itoa(maxEnviron) + " bytes")
		}
		buf = make([]byte, 2*len(buf))
	}
}
