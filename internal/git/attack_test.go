package git

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// An fsmonitor in .git/config is a program git runs whenever it reads the
// index: none of the runner's calls runs it.
func TestFsmonitorOfTheConfigNeverRuns(t *testing.T) {
	s := newScratch(t)
	h := newHostile(t)
	s.git("config", "core.fsmonitor", h.script)
	s.attackIsReal(h, nil, "status")
	everyOperation(t, s, s.r, h)
}

// Hooks, in .git/hooks or where core.hooksPath says, are the person's and
// never run for the runner's calls.
func TestHooksNeverRun(t *testing.T) {
	s := newScratch(t)
	h := newHostile(t)
	for _, name := range []string{"post-checkout", "reference-transaction", "post-index-change"} {
		if err := os.Symlink(h.script, filepath.Join(s.r.CommonDir(), "hooks", name)); err != nil {
			t.Fatal(err)
		}
	}
	s.attackIsReal(h, nil, "update-ref", "refs/heads/x", "HEAD")
	s.git("config", "core.hooksPath", h.hooksDir(t))
	s.attackIsReal(h, nil, "update-ref", "refs/heads/y", "HEAD")
	everyOperation(t, s, s.r, h)
}

// Clean, smudge and process filters named by .gitattributes or
// .git/info/attributes, defined in .git/config or in the global
// configuration (as git-lfs defines its own), never run: the runner's
// commits hold the files' bytes as they are, and its checkouts write the
// blobs' bytes.
func TestFiltersNeverRun(t *testing.T) {
	for _, c := range []struct {
		name   string
		config string // the configuration file, under the git dir ("" for the global one)
		driver string // what it defines
		infoAt string // the lines of .git/info/attributes
		attrs  string // .gitattributes
		probe  string // a new file, which the filter would be given
	}{
		{"clean and smudge in .git/config", "config", "[filter \"evil\"]\n\tclean = SCRIPT clean %f\n\tsmudge = SCRIPT smudge %f\n\trequired = true\n",
			"* filter=evil\n", "* filter=evil\n", "probe.txt"},
		// git-lfs's own is a process filter in the global configuration: it
		// is the person's, but it runs with the repository's configuration,
		// where lfs.customtransfer.<name>.path names programs.
		{"process in the global configuration", "", "[filter \"lfs\"]\n\tprocess = SCRIPT process\n\trequired = true\n",
			"", "*.bin filter=lfs\n", "data.bin"},
		{"a name with dots, included", "extra.cfg", "[filter \"Dotted.name\"]\n\tclean = SCRIPT dotted\n\tsmudge = SCRIPT dotted\n",
			"*.md filter=Dotted.name\n", "", "notes.md"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newScratch(t)
			h := newHostile(t)
			file := filepath.Join(s.r.CommonDir(), c.config)
			switch c.config {
			case "":
				file = filepath.Join(envValue(s.env, "HOME"), ".gitconfig")
			case "extra.cfg":
				s.git("config", "include.path", "extra.cfg")
			}
			b, _ := os.ReadFile(file)
			writeFile(t, file, string(b)+strings.ReplaceAll(c.driver, "SCRIPT", h.script))
			if c.infoAt != "" {
				writeFile(t, filepath.Join(s.r.CommonDir(), "info", "attributes"), c.infoAt)
			}
			if c.attrs != "" {
				s.write(".gitattributes", c.attrs)
			}
			// A new file is read, and filtered, even by a dry run.
			s.write(c.probe, "the file's bytes\n")
			s.attackIsReal(h, nil, "add", "--dry-run", "--", c.probe)

			everyOperation(t, s, s.r, h)

			// The blobs are the files' bytes.
			head, err := s.r.HeadCommit(ctx)
			if err != nil {
				t.Fatal(err)
			}
			files := []string{"landed.txt", "README", c.probe}
			blobs, err := s.r.readBlobs(ctx, head, files)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				if want := s.read(f); blobs[f] != want {
					t.Errorf("%s: blob %q, file %q", f, blobs[f], want)
				}
			}
			h.mustNotHaveRun(t, "readBlobs")
		})
	}
}

// A merge driver of the configuration, named by an attribute or by
// merge.default, never runs: a path both sides changed is a conflict.
func TestMergeDriversNeverRun(t *testing.T) {
	for _, how := range []string{"attribute", "merge.default"} {
		t.Run(how, func(t *testing.T) {
			s := newScratch(t)
			if err := s.r.CheckIntegrate(); err != nil {
				t.Skip(err)
			}
			h := newHostile(t)
			s.git("config", "merge.evil.driver", h.script+" %O %A %B")
			if how == "attribute" {
				writeFile(t, filepath.Join(s.r.CommonDir(), "info", "attributes"), "* merge=evil\n")
			} else {
				s.git("config", "merge.default", "evil")
			}
			base := s.git("rev-parse", "HEAD")
			onto := s.commitOn(base, map[string]string{"README": "hello from the run branch\n"})
			task := s.commitOn(base, map[string]string{"README": "hello from the task\n"})
			s.attackIsReal(h, nil, "merge-tree", "--write-tree", onto, task)

			_, err := s.r.Integrate(ctx, onto, task, Message{Subject: "task"})
			var ce *ConflictError
			if !errors.As(err, &ce) || strings.Join(ce.Files, ",") != "README" {
				t.Errorf("Integrate = %v; want a conflict in README", err)
			}
			h.mustNotHaveRun(t, "Integrate")
		})
	}
}

// A system configuration (the one GIT_CONFIG_SYSTEM names, or
// /etc/gitconfig) is not read: its fsmonitor does not run, and its
// ignore file does not leave files out of a snapshot.
func TestSystemConfigIsNotRead(t *testing.T) {
	s := newScratch(t)
	h := newHostile(t)
	dir := t.TempDir()
	ignore := filepath.Join(dir, "ignore")
	writeFile(t, ignore, "*.sys\n")
	system := filepath.Join(dir, "gitconfig")
	writeFile(t, system, "[core]\n\tfsmonitor = "+h.script+"\n\texcludesFile = "+ignore+"\n")
	var env []string
	for _, kv := range s.env {
		if !strings.HasPrefix(kv, "GIT_CONFIG_NOSYSTEM=") {
			env = append(env, kv)
		}
	}
	env = append(env, "GIT_CONFIG_SYSTEM="+system)
	s.attackIsReal(h, env, "status")

	r, err := Open(ctx, s.dir, Options{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	s.write("kept.sys", "not ignored\n")
	snap, err := r.Snapshot(ctx, "", runtime)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(snap.Paths, ",") != "kept.sys" {
		t.Errorf("Snapshot.Paths = %q; want kept.sys, which only the system configuration ignores", snap.Paths)
	}
	h.mustNotHaveRun(t, "Snapshot")
	os.Remove(filepath.Join(s.dir, "kept.sys"))
	everyOperation(t, s, r, h)
}

// In a partial clone, an object that is not there would be fetched from
// the promisor remote, whose remote.<name>.uploadpack (or core.sshCommand,
// or credential helper) is the agent's to set: the runner's calls fetch
// nothing, and fail instead. Each of the three locks holds alone:
// GIT_NO_LAZY_FETCH, protocol.allow=never, and protocol.<name>.allow=never
// where the configuration allows a protocol (the subtests take the
// others away).
func TestNoObjectIsFetched(t *testing.T) {
	for _, lock := range []string{"GIT_NO_LAZY_FETCH", "protocol.allow", "protocol.file.allow"} {
		t.Run(lock, func(t *testing.T) {
			src := newScratch(t)
			old := src.git("rev-parse", "HEAD")
			src.write("README", "hello again\n")
			src.git("commit", "-qam", "second")
			src.git("config", "uploadpack.allowFilter", "true")

			s := &scratch{t: t, dir: filepath.Join(t.TempDir(), "clone"), env: src.env}
			src.gitIn(src.dir, "clone", "-q", "--filter=blob:none", "file://"+src.dir, s.dir)
			h := newHostile(t)
			s.git("config", "remote.origin.uploadpack", h.script)
			if lock == "protocol.file.allow" {
				s.git("config", "protocol.file.allow", "always")
			}
			s.attackIsReal(h, nil, "cat-file", "-p", old+":README")

			r, err := Open(ctx, s.dir, Options{Env: s.env})
			if err != nil {
				t.Fatal(err)
			}
			if lock == "GIT_NO_LAZY_FETCH" { // without protocol.allow=never
				s.plainGit(append(slices.Clip(s.env), "GIT_NO_LAZY_FETCH=1"), "cat-file", "-p", old+":README")
				if h.ran() != "" {
					t.Skip("this git fetches with GIT_NO_LAZY_FETCH=1 (git 2.45, 2.39.4 and other maintenance releases honour it)")
				}
				saved := globalArgs
				t.Cleanup(func() { globalArgs = saved })
				globalArgs = nil
				for i := 0; i < len(saved); i += 2 {
					if saved[i+1] != "protocol.allow=never" {
						globalArgs = append(globalArgs, saved[i:i+2]...)
					}
				}
			} else {
				r.x.env = slices.DeleteFunc(slices.Clone(r.x.env), func(kv string) bool { return strings.HasPrefix(kv, "GIT_NO_LAZY_FETCH=") })
			}
			if _, _, err := r.AddDetachedWorktree(ctx, filepath.Join(t.TempDir(), "slot"), old); err == nil {
				t.Error("AddDetachedWorktree at a commit whose blobs are missing succeeded")
			}
			h.mustNotHaveRun(t, "AddDetachedWorktree")
			if err := r.ResetWorktree(ctx, old, runtime); err == nil {
				t.Error("ResetWorktree to a commit whose blobs are missing succeeded")
			}
			h.mustNotHaveRun(t, "ResetWorktree")
		})
	}
}

// A submodule's configuration is in the working tree, the agent's to
// write even when it is confined: a status, an add or a checkout that
// looked into the submodule's files would run its filters.
func TestSubmoduleConfigNeverRuns(t *testing.T) {
	s := newScratch(t)
	h := newHostile(t)
	sub := filepath.Join(s.dir, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	s.gitIn(sub, "init", "-q")
	writeFile(t, filepath.Join(sub, "x"), "x\n")
	s.gitIn(sub, "add", "x")
	s.gitIn(sub, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "sub")
	writeFile(t, filepath.Join(s.dir, ".gitmodules"), "[submodule \"sub\"]\n\tpath = sub\n\turl = ./sub\n")
	s.git("add", "sub", ".gitmodules")
	s.git("commit", "-qm", "a submodule")
	// Checkouts that went into the submodule would run its filters too.
	s.git("config", "submodule.sub.url", "./sub")
	s.git("config", "submodule.recurse", "true")

	s.gitIn(sub, "config", "filter.sub.clean", h.script)
	s.gitIn(sub, "config", "filter.sub.smudge", h.script)
	s.gitIn(sub, "config", "filter.sub.required", "true")
	s.gitIn(sub, "config", "core.fsmonitor", h.script)
	writeFile(t, filepath.Join(sub, ".git", "info", "attributes"), "* filter=sub\n")
	touch := func() { // same size, another time: git must read the file
		t.Helper()
		st, _ := os.Stat(filepath.Join(sub, "x"))
		if err := os.Chtimes(filepath.Join(sub, "x"), st.ModTime(), st.ModTime().Add(-1e12)); err != nil {
			t.Fatal(err)
		}
	}
	touch()
	s.attackIsReal(h, nil, "-c", "core.fsmonitor=false", "status", "--porcelain")

	touch()
	if cs, err := s.r.Changes(ctx, runtime); err != nil || len(cs) != 0 {
		t.Errorf("Changes = %q, %v", paths(cs), err)
	}
	h.mustNotHaveRun(t, "Changes")
	touch()
	if snap, err := s.r.Snapshot(ctx, "", runtime); err != nil || len(snap.Paths) != 0 {
		t.Errorf("Snapshot = %q, %v", snap.Paths, err)
	}
	h.mustNotHaveRun(t, "Snapshot")

	// The submodule moves: the snapshot takes its new commit.
	safe := []string{"-c", "core.fsmonitor=false", "-c", "filter.sub.clean=", "-c", "filter.sub.required=false"}
	s.gitIn(sub, append(safe, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "moved")...)
	moved := s.gitIn(sub, append(safe, "rev-parse", "HEAD")...)
	touch()
	snap, err := s.r.Snapshot(ctx, "", runtime)
	if err != nil || strings.Join(snap.Paths, ",") != "sub" {
		t.Fatalf("Snapshot after the submodule moved = %q, %v", snap.Paths, err)
	}
	if got := s.git("rev-parse", snap.Tree+":sub"); got != moved {
		t.Errorf("the snapshot's gitlink = %s, want the submodule's HEAD %s", got, moved)
	}
	h.mustNotHaveRun(t, "Snapshot")
	touch()
	everyOperation(t, s, s.r, h)
}

// A driver added to the configuration after the Repo's first calls, or in
// a file an include names (empty, or missing, until then), is neutralised
// too: the list is read again when a file it came from changes.
func TestDriversAddedLaterAreNeutralised(t *testing.T) {
	s := newScratch(t)
	h := newHostile(t)
	writeFile(t, filepath.Join(s.r.CommonDir(), "info", "attributes"), "* filter=late\n*.inc filter=included\n")
	s.git("config", "include.path", "extra.cfg")
	s.write("a.txt", "a\n")
	if _, err := s.r.Snapshot(ctx, "", runtime); err != nil {
		t.Fatal(err)
	}

	s.git("config", "filter.late.clean", h.script)
	s.git("config", "filter.late.required", "true")
	if _, err := s.r.Snapshot(ctx, "", runtime); err != nil {
		t.Fatal(err)
	}
	h.mustNotHaveRun(t, "Snapshot after a filter was configured")

	writeFile(t, filepath.Join(s.r.CommonDir(), "extra.cfg"), "[filter \"included\"]\n\tclean = "+h.script+"\n\trequired = true\n")
	s.write("b.inc", "b\n")
	s.attackIsReal(h, nil, "add", "--dry-run", "--", "b.inc")
	if _, err := s.r.Snapshot(ctx, "", runtime); err != nil {
		t.Fatal(err)
	}
	h.mustNotHaveRun(t, "Snapshot after an included file defined a filter")
}

func TestDriverOverrides(t *testing.T) {
	es, err := parseConfigList([]byte("file:/c\x00filter.lfs.process\ngit-lfs filter-process\x00" +
		"file:/c\x00filter.a.b=c.clean\nx\x00file:/c\x00filter.lfs.required\x00" +
		"file:/c\x00merge.default\nevil\x00file:/c\x00merge.ev.il.name\nx\x00" +
		"file:/c\x00protocol.file.allow\nalways\x00file:/c\x00protocol.allow\nalways\x00" +
		"file:/c\x00include.path\nx.cfg\x00"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range driverOverrides(es) {
		got = append(got, o.key+"="+o.value)
	}
	want := []string{
		"filter.a.b=c.clean=", "filter.a.b=c.smudge=", "filter.a.b=c.process=", "filter.a.b=c.required=false",
		"filter.lfs.clean=", "filter.lfs.smudge=", "filter.lfs.process=", "filter.lfs.required=false",
		"merge.ev.il.driver=exit 1", "protocol.file.allow=never",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("driverOverrides =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	vars, args, err := overrideCall(driverOverrides(es), true)
	if err != nil || args != nil || vars[0] != "GIT_CONFIG_COUNT=10" || vars[1] != "GIT_CONFIG_KEY_0=filter.a.b=c.clean" || vars[2] != "GIT_CONFIG_VALUE_0=" {
		t.Errorf("overrideCall(env) = %q, %q, %v", vars, args, err)
	}
	// With -c, a name holding '=' cannot be overridden: refused.
	if _, _, err := overrideCall(driverOverrides(es), false); err == nil {
		t.Error("overrideCall(-c) of a name holding '=' succeeded")
	}
	_, args, err = overrideCall(driverOverrides(append(es[:1:1], es[2:]...)), false)
	if err != nil || strings.Join(args, " ") != "-c filter.lfs.clean= -c filter.lfs.smudge= -c filter.lfs.process= -c filter.lfs.required=false -c merge.ev.il.driver=exit 1 -c protocol.file.allow=never" {
		t.Errorf("overrideCall(-c) = %q, %v", args, err)
	}
}
