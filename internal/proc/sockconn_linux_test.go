//go:build linux

package proc

import (
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSockConn: the runner's socket to a supervisor carries bytes and
// descriptors both ways, the descriptors received do not leak into a
// command started later, the end of the other side reads as io.EOF, and
// closing a connection stops a read waiting on it (how the runner
// discards a supervisor).
func TestSockConn(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, err := newSockConn(fds[0], "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := newSockConn(fds[1], "b")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	msg := []byte("{\"path\":\"x\"}\n")
	if n, err := a.WriteMsg(msg, unix.UnixRights(int(w.Fd()))); err != nil || n != len(msg) {
		t.Fatalf("WriteMsg = %d, %v", n, err)
	}
	buf, oob := make([]byte, 64), make([]byte, unix.CmsgSpace(4*4))
	n, oobn, err := b.ReadMsg(buf, oob)
	if err != nil || string(buf[:n]) != string(msg) {
		t.Fatalf("ReadMsg = %q, %v", buf[:n], err)
	}
	cmsgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(cmsgs) != 1 {
		t.Fatalf("control messages: %v, %v", cmsgs, err)
	}
	got, err := unix.ParseUnixRights(&cmsgs[0])
	if err != nil || len(got) != 1 {
		t.Fatalf("rights: %v, %v", got, err)
	}
	if flags, err := unix.FcntlInt(uintptr(got[0]), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("received descriptor: flags %#x, %v; want close-on-exec", flags, err)
	}
	// The descriptor received is the pipe's write end.
	if _, err := unix.Write(got[0], []byte("!")); err != nil {
		t.Fatal(err)
	}
	unix.Close(got[0])
	one := make([]byte, 1)
	if _, err := r.Read(one); err != nil || one[0] != '!' {
		t.Fatalf("pipe read %q, %v", one, err)
	}

	// Plain bytes the other way, then the end of file.
	if _, err := b.Write([]byte("done\n")); err != nil {
		t.Fatal(err)
	}
	if n, _, err := a.ReadMsg(buf, oob); err != nil || string(buf[:n]) != "done\n" {
		t.Fatalf("ReadMsg = %q, %v", buf[:n], err)
	}
	a.Close()
	if n, _, err := b.ReadMsg(buf, oob); n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("after the other side closed: ReadMsg = %d, %v; want io.EOF", n, err)
	}

	// A read waiting on a connection ends when it is closed.
	fds, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[1])
	c, err := newSockConn(fds[0], "c")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := c.ReadMsg(buf, oob)
		done <- err
	}()
	time.Sleep(10 * time.Millisecond) // most likely waiting by now; either way it must end
	c.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a read on a closed connection returned no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("closing the connection did not end the read waiting on it")
	}
}

// TestSockConnRefusesNonSocket: a supervisor started without its socket
// says so instead of reading from whatever descriptor 3 is.
func TestSockConnRefusesNonSocket(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, err := newSockConn(int(r.Fd()), "pipe"); err == nil {
		t.Error("a pipe was taken for a socket")
	}
}
