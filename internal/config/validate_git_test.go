package config

import (
	"testing"
	"time"
)

// The keys of the run branch's way back (SPEC §23): their defaults, and
// a clear error naming the key, its line and the fix for each bad value.
func TestWayBackKeys(t *testing.T) {
	d := Default().Git
	if !d.FollowBase || d.Remote != "origin" || d.Base != "" || d.KeepRefs.Count != 100 || d.KeepRefs.Age.Duration != 720*time.Hour {
		t.Errorf("defaults = follow_base %v, remote %q, base %q, keep_refs %+v", d.FollowBase, d.Remote, d.Base, d.KeepRefs)
	}
	c, err := Parse(file, []byte("[git]\nbase = \"develop\"\nfollow_base = false\nremote = \"git@github.com:me/app.git\"\nkeep_refs = { count = 10, age = \"48h\" }\n"))
	if err != nil {
		t.Fatal(err)
	}
	if g := c.Git; g.Base != "develop" || g.FollowBase || g.Remote != "git@github.com:me/app.git" || g.KeepRefs.Count != 10 || g.KeepRefs.Age.Duration != 48*time.Hour {
		t.Errorf("parsed = %+v", g)
	}

	tests := []struct {
		name string
		src  string
		line int
		key  string
		msg  string
	}{
		{"base with a space", "[git]\nbase = \"my main\"\n", 2, "git.base", `"my main" is not a valid git branch name`},
		{"base as a ref", "[git]\nbase = \"refs/heads/main\"\n", 2, "git.base", "write it as `git branch` shows it"},
		{"base named after the root", "[git]\nbase = \"base/{root}\"\n", 2, "git.base", "not named after the tree's root"},
		{"base is the run branch", "[git]\nbranch = \"night\"\nbase = \"night\"\n", 3, "git.base", "is the run branch itself"},
		{"base not a string", "[git]\nbase = 1\n", 2, "git.base", "want a string"},
		{"follow_base not a bool", "[git]\nfollow_base = \"yes\"\n", 2, "git.follow_base", "want true or false"},
		{"empty remote", "[git]\nremote = \" \"\n", 2, "git.remote", "the name of a remote of the repository"},
		{"ext remote", "[git]\nremote = \"ext::sh -c evil\"\n", 2, "git.remote", "runs a program of the URL's choosing"},
		{"remote option", "[git]\nremote = \"--upload-pack=x\"\n", 2, "git.remote", "is neither the name of a remote nor a URL"},
		{"negative keep count", "[git]\nkeep_refs = { count = -1 }\n", 2, "git.keep_refs.count", "must be 0 or more"},
		{"negative keep age", "[git.keep_refs]\nage = \"-1h\"\n", 2, "git.keep_refs.age", "must not be negative"},
		{"keep age in days", "[git.keep_refs]\nage = \"30d\"\n", 2, "git.keep_refs.age", `invalid duration "30d"`},
		{"keep_refs unknown key", "[git.keep_refs]\nnumber = 3\n", 2, "", `unknown key "git.keep_refs.number"`},
		{"keep_refs not a table", "[git]\nkeep_refs = 10\n", 2, "git.keep_refs", "want a table"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantProblem(t, tc.src, tc.line, tc.key, tc.msg)
		})
	}
}
