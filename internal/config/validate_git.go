package config

import (
	"strings"
)

// validateWayBack checks the keys of the run branch's way back to its
// base (SPEC §23): git.base, git.remote and git.keep_refs.
func (r *report) validateWayBack(g Git) {
	switch b := g.Base; {
	case b == "":
	case strings.Contains(b, "{root}"):
		r.addf("git.base", "%q: the base is the person's branch (main, develop), not named after the tree's root; leave it out for the branch the checkout was on when the run branch was made", b)
	case !validBranchName(b) || strings.HasPrefix(b, "refs/"):
		r.addf("git.base", "%q is not a valid git branch name (no spaces, no \"..\", no ~^:?*[\\, no leading or trailing / or .lock); write it as `git branch` shows it, for example \"main\"", b)
	case b == g.Branch:
		r.addf("git.base", "%q is the run branch itself (git.branch): name the branch the run's work goes back to, for example \"main\"", b)
	}
	switch rm := strings.TrimSpace(g.Remote); {
	case rm == "":
		r.addf("git.remote", "must not be empty: the name of a remote of the repository (`git remote -v` lists them; the default is %q) or its URL", DefaultRemote)
	case transportOf(rm) != "":
		r.addf("git.remote", "%q uses git's %s transport, which runs a program of the URL's choosing: the runner never uses it; give a remote's name, or a URL (ssh://, https://, file://)", rm, transportOf(rm))
	case strings.HasPrefix(rm, "-") || strings.ContainsAny(rm, " \t\n"):
		r.addf("git.remote", "%q is neither the name of a remote nor a URL; the default is %q", rm, DefaultRemote)
	}
	if g.KeepRefs.Count < 0 {
		r.addf("git.keep_refs.count", "must be 0 or more (0 = no bound on how many), got %d; the default is %d", g.KeepRefs.Count, DefaultKeepRefs)
	}
	r.nonNegative("git.keep_refs.age", g.KeepRefs.Age, `"720h" (30 days), or "0s" for no bound on age`)
}
