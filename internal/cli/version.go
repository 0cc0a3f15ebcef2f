package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version says which runner this is, for `runner --version` and bug
// reports: the module version (a tag such as v1.2.0 for a `go install
// ...@v1.2.0`, "(devel)" for a build from a checkout), the VCS revision
// the binary was built from and whether the tree had uncommitted changes
// (known when it was built by `go build` in a git checkout, not with
// -buildvcs=false), and the Go version and platform.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Sprintf("(unknown version; no build information) %s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
	return versionOf(bi)
}

// versionOf is version for the given build information.
func versionOf(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	var b strings.Builder
	b.WriteString(v)
	switch {
	case rev != "":
		if len(rev) > 12 {
			rev = rev[:12]
		}
		fmt.Fprintf(&b, " (revision %s", rev)
		if at != "" {
			fmt.Fprintf(&b, " of %s", at)
		}
		if modified {
			b.WriteString(", with uncommitted changes")
		}
		b.WriteString(")")
	case !strings.HasPrefix(v, "v"):
		b.WriteString(" (revision unknown: built without VCS information)")
	}
	goVersion := bi.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	fmt.Fprintf(&b, " %s %s/%s", goVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}
