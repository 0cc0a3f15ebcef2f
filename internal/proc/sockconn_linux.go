//go:build linux

package proc

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// sockConn is one end of the Unix stream socket between the runner and a
// supervisor: bytes read and written through the runtime's poller, as
// net.UnixConn does, and descriptors passed beside them (SCM_RIGHTS).
// Package net is not used for it: the supervisor answers from this
// package's initializer (see helper.go), and net, with what depends on
// it, is initialised only after the engine's packages.
type sockConn struct {
	f *os.File
}

// newSockConn takes fd, which must be a Unix stream socket, over: it
// becomes non-blocking and close-on-exec (a command started later does
// not inherit it), and is closed with the sockConn.
func newSockConn(fd int, name string) (*sockConn, error) {
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return nil, fmt.Errorf("getsockopt: %w", err)
	}
	if typ != unix.SOCK_STREAM {
		return nil, fmt.Errorf("socket type %d, not a stream", typ)
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, fmt.Errorf("set non-blocking: %w", err)
	}
	return &sockConn{f: os.NewFile(uintptr(fd), name)}, nil
}

func (c *sockConn) Read(p []byte) (int, error)  { return c.f.Read(p) }
func (c *sockConn) Write(p []byte) (int, error) { return c.f.Write(p) }
func (c *sockConn) Close() error                { return c.f.Close() }

// WriteMsg sends p with the control message oob, as sendmsg(2) does on
// a stream socket: it returns how much of p went (the rest is sent with
// Write).
func (c *sockConn) WriteMsg(p, oob []byte) (n int, err error) {
	rc, err := c.f.SyscallConn()
	if err != nil {
		return 0, err
	}
	werr := rc.Write(func(fd uintptr) bool {
		for {
			n, err = unix.SendmsgN(int(fd), p, oob, nil, 0)
			if err != unix.EINTR {
				return err != unix.EAGAIN
			}
		}
	})
	if werr != nil {
		return n, werr
	}
	return n, err
}

// ReadMsg reads bytes into p and a control message into oob, as
// recvmsg(2) does; descriptors received are close-on-exec. At end of
// file it returns io.EOF.
func (c *sockConn) ReadMsg(p, oob []byte) (n, oobn int, err error) {
	rc, err := c.f.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	rerr := rc.Read(func(fd uintptr) bool {
		for {
			n, oobn, _, _, err = unix.Recvmsg(int(fd), p, oob, unix.MSG_CMSG_CLOEXEC)
			if err != unix.EINTR {
				return err != unix.EAGAIN
			}
		}
	})
	switch {
	case rerr != nil:
		return n, oobn, rerr
	case err != nil:
		return n, oobn, err
	case n == 0 && oobn == 0 && len(p) > 0:
		return 0, 0, io.EOF
	}
	return n, oobn, nil
}
