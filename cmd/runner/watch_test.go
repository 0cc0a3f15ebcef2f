package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// Helper commands for the scripts that steer a running runner
// (testdata/script/watch_*.txt, stop_*.txt, follow_*.txt). A background
// command's output reaches a script only when it ends, so `logged` copies
// it to a file that `waitfor` can poll while it runs.

// waitFor is `waitfor [-count N] FILE REGEX TIMEOUT`: it waits until FILE
// holds at least N (default 1) matches of REGEX (multi-line mode), and
// fails after TIMEOUT (Go duration) showing what FILE held.
func waitFor(args []string) int {
	fs := flag.NewFlagSet("waitfor", flag.ContinueOnError)
	count := fs.Int("count", 1, "matches to wait for")
	if err := fs.Parse(args); err != nil || fs.NArg() != 3 {
		fmt.Fprintln(os.Stderr, "usage: waitfor [-count N] FILE REGEX TIMEOUT")
		return 2
	}
	file, pattern := fs.Arg(0), fs.Arg(1)
	re, err := regexp.Compile("(?m)" + pattern)
	if err != nil {
		fmt.Fprintln(os.Stderr, "waitfor:", err)
		return 2
	}
	timeout, err := time.ParseDuration(fs.Arg(2))
	if err != nil {
		fmt.Fprintln(os.Stderr, "waitfor:", err)
		return 2
	}
	deadline := time.Now().Add(timeout)
	for {
		data, _ := os.ReadFile(file)
		if len(re.FindAllIndex(data, -1)) >= *count {
			return 0
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "waitfor: %s did not match %q %d time(s) within %s; it holds:\n%s\n", file, pattern, *count, timeout, data)
			return 1
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// atomicWrite is `atomicwrite SRC DST`: it saves SRC's content as DST the
// way editors do, writing a temporary file next to DST and renaming it
// over DST.
func atomicWrite(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: atomicwrite SRC DST")
		return 2
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "atomicwrite:", err)
		return 1
	}
	dst := args[1]
	tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".swp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "atomicwrite:", err)
		return 1
	}
	if err := os.Rename(tmp, dst); err != nil {
		fmt.Fprintln(os.Stderr, "atomicwrite:", err)
		return 1
	}
	return 0
}

// logged is `logged [-exit N] LOG PROG [ARGS...]`: it runs PROG with its
// standard output and error passed through and also appended to LOG as
// they are written, forwards SIGINT and SIGTERM to it, and exits with its
// status; with -exit N it exits 0 when PROG exited with status N and 1
// otherwise.
func logged(args []string) int {
	fs := flag.NewFlagSet("logged", flag.ContinueOnError)
	want := fs.Int("exit", -1, "expected exit status")
	if err := fs.Parse(args); err != nil || fs.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: logged [-exit N] LOG PROG [ARGS...]")
		return 2
	}
	f, err := os.OpenFile(fs.Arg(0), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "logged:", err)
		return 2
	}
	defer f.Close()
	log := &lockedWriter{w: f}
	cmd := exec.Command(fs.Arg(1), fs.Args()[2:]...)
	cmd.Stdout = io.MultiWriter(os.Stdout, log)
	cmd.Stderr = io.MultiWriter(os.Stderr, log)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "logged:", err)
		return 2
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	signal.Stop(sigs)
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			fmt.Fprintln(os.Stderr, "logged:", err)
			return 2
		}
		code = ee.ExitCode()
	}
	if *want < 0 {
		return code
	}
	if code != *want {
		fmt.Fprintf(os.Stderr, "logged: %s exited with status %d, want %d\n", fs.Arg(1), code, *want)
		return 1
	}
	return 0
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
