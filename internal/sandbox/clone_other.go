//go:build !linux

package sandbox

import "syscall"

// Clone changes nothing outside Linux: there are no namespaces, and a
// room that asks for them cannot be built.
func Clone(room Room, sys *syscall.SysProcAttr) {}
