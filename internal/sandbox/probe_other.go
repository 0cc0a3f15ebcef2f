//go:build !linux

package sandbox

import "errors"

// ProbeNamespaces says that there are none outside Linux.
func ProbeNamespaces(ns string) error {
	return errors.New("namespaces are Linux only")
}
