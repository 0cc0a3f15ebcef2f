//go:build unix

package proc

import "os"

// Any binary that links this package plays the supervisor: init runs
// Supervise and exits when os.Args[1] is SuperviseArg, before main or
// TestMain. The runner's binary so answers as its supervisor once this
// package and what it imports are initialised, before the initializers of
// the command line, the engine (Temporal's SDK and gRPC, whose API types
// register themselves with protobuf), the loop and the packages that
// compile patterns, which every other start of the binary pays. Go
// initialises a package after all it imports and, among those ready, in
// the order of their import paths: what this package imports, directly or
// not, decides how early that is (package net, say, comes only after the
// engine's API types; see sockconn_linux.go).
func init() {
	if len(os.Args) > 1 && os.Args[1] == SuperviseArg {
		os.Exit(Supervise(os.Args[2:]))
	}
}
