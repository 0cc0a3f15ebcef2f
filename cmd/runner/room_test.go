package main

import (
	"fmt"
	"net"
	"os"
	"time"
)

// Helper commands for the scripts of the agent's room (room_*.txt): a
// Unix socket outside the room, as a tmux server's, and a client an
// agent would use to reach it.

// listen is `listen SOCKET LOG`: it listens on the Unix socket SOCKET,
// writes "listening" to LOG, then a line for every connection it
// accepts, until it is killed (or after five minutes).
func listen(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: listen SOCKET LOG")
		return 2
	}
	l, err := net.Listen("unix", args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		return 1
	}
	log, err := os.OpenFile(args[1], os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		return 1
	}
	fmt.Fprintln(log, "listening")
	go func() {
		time.Sleep(5 * time.Minute)
		os.Exit(1)
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			return 1
		}
		fmt.Fprintln(log, "a connection: something could run outside the room")
		c.Close()
	}
}

// dial is `dial SOCKET`: it connects to the Unix socket SOCKET, and
// exits 0 when that worked, 1 with why when not.
func dial(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: dial SOCKET")
		return 2
	}
	c, err := net.Dial("unix", args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial:", err)
		return 1
	}
	c.Close()
	return 0
}
