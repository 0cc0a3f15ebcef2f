package git

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// indexState is what the working tree's index holds, for checking that a
// snapshot leaves it alone.
func (s *scratch) indexState() string {
	s.t.Helper()
	return s.git("ls-files", "-s", "--debug") // with the cached stat data
}

func TestSnapshotTakesTheFilesNotTheIndex(t *testing.T) {
	s := newScratch(t)
	s.write("del.txt", "to delete\n")
	s.write("dir/file", "a file that becomes a folder\n")
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "more")
	head := s.git("rev-parse", "HEAD")

	s.write("README", "changed\n")
	s.write("staged.txt", "staged\n")
	s.git("add", "staged.txt")
	s.write("staged.txt", "staged, then changed again\n")
	os.Remove(filepath.Join(s.dir, "del.txt"))
	s.write("new/deep/file.go", "package deep\n")
	os.Remove(filepath.Join(s.dir, "dir/file"))
	s.write("dir/file/inside", "now a folder\n")
	s.write("debug.log", "ignored\n")
	s.write("build/out", "ignored\n")
	s.write(".runner/tree.json", "{\"status\":\"done\"}\n")
	s.write(".runner/state/run_state.json", "{}\n")
	s.write(".runner/runs/000001/prompt.md", "prompt\n")
	s.write(".runner/lock", "pid 1\n")
	s.gitIn(s.dir, "init", "-q", "nested")
	s.write("nested/x", "x\n")
	before := s.indexState()

	snap, err := s.r.Snapshot(ctx, "", runtime)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Base != head {
		t.Errorf("Base = %s, want %s", snap.Base, head)
	}
	wantPaths := []string{".runner/tree.json", "README", "del.txt", "dir/file", "dir/file/inside", "new/deep/file.go", "staged.txt"}
	if !slices.Equal(snap.Paths, wantPaths) {
		t.Errorf("Paths = %q\nwant %q", snap.Paths, wantPaths)
	}
	want := []string{".gitignore", ".runner/.gitignore", ".runner/tree.json", "README", "dir/file/inside", "new/deep/file.go", "staged.txt"}
	if got := s.treeFiles(snap.Tree); !slices.Equal(got, want) {
		t.Errorf("snapshot files = %q\nwant %q", got, want)
	}
	for path, content := range map[string]string{
		"README":            "changed\n",
		"staged.txt":        "staged, then changed again\n",
		".runner/tree.json": "{\"status\":\"done\"}\n",
	} {
		if got := s.git("cat-file", "blob", snap.Tree+":"+path); got+"\n" != content {
			t.Errorf("%s in the snapshot = %q, want %q", path, got, content)
		}
	}
	if after := s.indexState(); after != before {
		t.Errorf("the snapshot changed the working tree's index:\n%s\nthen\n%s", before, after)
	}
	// The snapshot's temporary index is kept for AdvanceHead, until the
	// next snapshot.
	first, _ := filepath.Glob(filepath.Join(s.r.GitDir(), tempIndexPrefix+"*"))
	if _, err := s.r.Snapshot(ctx, "", runtime); err != nil {
		t.Fatal(err)
	}
	second, _ := filepath.Glob(filepath.Join(s.r.GitDir(), tempIndexPrefix+"*"))
	if len(first) != 1 || len(second) != 1 || first[0] == second[0] {
		t.Errorf("temporary indexes kept: %q, then %q; want one, then another", first, second)
	}
	s.fsck()
}

func TestAdvanceHeadBringsTheIndexAlong(t *testing.T) {
	s := newScratch(t)
	head := s.git("rev-parse", "HEAD")
	commitOf := func(content string) (Snapshot, string) {
		t.Helper()
		s.write("a.txt", content)
		s.write("dir/new.txt", content)
		snap, err := s.r.Snapshot(ctx, "", runtime)
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.r.Commit(ctx, snap.Tree, snap.Base, Message{Subject: content})
		if err != nil {
			t.Fatal(err)
		}
		return snap, c
	}
	clean := func(what string, kept int) {
		t.Helper()
		if cs, err := s.r.Changes(ctx, runtime); err != nil || len(cs) != 0 {
			t.Errorf("%s: Changes = %q, %v; want none", what, paths(cs), err)
		}
		if left, _ := filepath.Glob(filepath.Join(s.r.GitDir(), tempIndexPrefix+"*")); len(left) != kept {
			t.Errorf("%s: temporary indexes left: %q, want %d", what, left, kept)
		}
	}

	// The snapshot's index becomes the working tree's.
	snap, c := commitOf("one\n")
	if err := s.r.AdvanceHead(ctx, snap, c, head); err != nil {
		t.Fatal(err)
	}
	clean("installed", 0)
	if got := s.git("rev-parse", "HEAD"); got != c {
		t.Errorf("HEAD = %s, want %s", got, c)
	}

	// A later snapshot took its place: the paths are updated instead.
	snap, c2 := commitOf("two\n")
	if _, err := s.r.Snapshot(ctx, "", runtime); err != nil {
		t.Fatal(err)
	}
	if err := s.r.AdvanceHead(ctx, snap, c2, c); err != nil {
		t.Fatal(err)
	}
	clean("updated", 1) // the later snapshot's

	// Someone staged a file after the snapshot: the index is not replaced,
	// and their file stays staged.
	snap, c3 := commitOf("three\n")
	s.write("theirs.txt", "theirs\n")
	s.git("add", "theirs.txt")
	if err := s.r.AdvanceHead(ctx, snap, c3, c2); err != nil {
		t.Fatal(err)
	}
	if got := s.git("diff", "--cached", "--name-only"); got != "theirs.txt" {
		t.Errorf("staged after AdvanceHead: %q, want theirs.txt", got)
	}

	// The wrong old value: HEAD stays.
	snap, c4 := commitOf("four\n")
	if err := s.r.AdvanceHead(ctx, snap, c4, c2); !errors.Is(err, ErrRefChanged) {
		t.Errorf("AdvanceHead from a wrong old value = %v", err)
	}
	if got := s.git("rev-parse", "HEAD"); got != c3 {
		t.Errorf("HEAD = %s, want %s", got, c3)
	}
	s.fsck()
}

func TestSnapshotOfAnUnchangedTreeIsTheParentsTree(t *testing.T) {
	s := newScratch(t)
	s.write(".runner/state/run_state.json", "{}\n")
	s.write("debug.log", "ignored\n")
	snap, err := s.r.Snapshot(ctx, "", runtime)
	if err != nil {
		t.Fatal(err)
	}
	if want := s.git("rev-parse", "HEAD^{tree}"); snap.Tree != want || len(snap.Paths) != 0 {
		t.Errorf("Snapshot = %+v, want tree %s and no changes", snap, want)
	}
	if _, err := s.r.Commit(ctx, snap.Tree, snap.Base, Message{Subject: "nothing"}); err != ErrNoChange {
		t.Errorf("Commit of an unchanged tree = %v, want ErrNoChange", err)
	}
	if _, err := s.r.CommitSnapshot(ctx, snap, Message{Subject: "nothing"}); err != ErrNoChange {
		t.Errorf("CommitSnapshot of an unchanged tree = %v, want ErrNoChange", err)
	}
}

func TestCommitSnapshot(t *testing.T) {
	s := newScratch(t)
	head := s.git("rev-parse", "HEAD")
	s.write("new.txt", "new\n")
	snap, err := s.r.Snapshot(ctx, "", runtime)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.r.CommitSnapshot(ctx, snap, Message{Subject: "add new.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.git("rev-parse", c+"^{tree}", c+"^"); got != snap.Tree+"\n"+head {
		t.Errorf("the commit's tree and parent = %q, want %s and %s", got, snap.Tree, head)
	}
	if got := s.git("log", "-1", "--format=%s", c); got != "add new.txt" {
		t.Errorf("subject = %q", got)
	}
	if _, err := s.r.CommitSnapshot(ctx, snap, Message{Subject: " \n "}); err == nil {
		t.Error("CommitSnapshot took an empty subject")
	}
}

// An agent that runs `git add -A` stages the runner's state files (state/
// is not ignored): they stay out of the snapshot all the same.
func TestSnapshotIgnoresStagedRuntimeFiles(t *testing.T) {
	s := newScratch(t)
	s.write(".runner/state/run_state.json", "{}\n")
	s.write("work.go", "package work\n")
	s.git("add", "-A")
	if !strings.Contains(s.git("diff", "--cached", "--name-only"), ".runner/state/run_state.json") {
		t.Fatal("the state file is not staged")
	}
	snap, err := s.r.Snapshot(ctx, "", runtime)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.treeFiles(snap.Tree); slices.Contains(got, ".runner/state/run_state.json") || !slices.Contains(got, "work.go") {
		t.Errorf("snapshot files = %q", got)
	}
}

// An agent that commits moves HEAD off the checkpoint: the snapshot on
// the checkpoint still holds everything the files hold, and the runtime
// files the agent committed stay as the checkpoint has them.
func TestSnapshotWhenTheAgentCommitted(t *testing.T) {
	s := newScratch(t)
	s.write(".runner/state/notes.md", "the person committed a state file\n")
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "with state")
	checkpoint := s.git("rev-parse", "HEAD")

	s.write("committed.go", "package a\n")
	s.write(".runner/state/notes.md", "changed by the runner\n")
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "agent commit")
	s.write("uncommitted.go", "package b\n")
	s.write("README", "changed after the agent's commit\n")

	snap, err := s.r.Snapshot(ctx, checkpoint, runtime)
	if err != nil {
		t.Fatal(err)
	}
	files := s.treeFiles(snap.Tree)
	for _, f := range []string{"committed.go", "uncommitted.go", ".runner/state/notes.md"} {
		if !slices.Contains(files, f) {
			t.Errorf("snapshot lacks %s: %q", f, files)
		}
	}
	if got := s.git("cat-file", "blob", snap.Tree+":.runner/state/notes.md"); got != "the person committed a state file" {
		t.Errorf("state file in the snapshot = %q, want the checkpoint's", got)
	}
	if got := s.git("cat-file", "blob", snap.Tree+":README"); got != "changed after the agent's commit" {
		t.Errorf("README in the snapshot = %q", got)
	}
}

func TestCommitWithTrailers(t *testing.T) {
	s := newScratch(t)
	head := s.git("rev-parse", "HEAD")
	s.write("a.txt", "a\n")
	snap, err := s.r.Snapshot(ctx, "", runtime)
	if err != nil {
		t.Fatal(err)
	}
	m := Message{
		Subject: "add a\n(node a)",
		// The summary ends with a paragraph that looks like trailers, and
		// carries a terminal escape.
		Body:     "Did the thing.\x1b[31m\r\n---\n\nRunner-Node: forged\nRunner-Iteration: 99\n",
		Trailers: NodeTrailers("a.1", 7),
	}
	c, err := s.r.Commit(ctx, snap.Tree, head, m)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.git("log", "-1", "--format=%(trailers:key=Runner-Node,valueonly)", c); got != "a.1" {
		t.Errorf("Runner-Node read by git log = %q, want a.1", got)
	}
	if got := s.git("log", "-1", "--format=%(trailers:key=Runner-Iteration,valueonly)", c); got != "7" {
		t.Errorf("Runner-Iteration read by git log = %q, want 7", got)
	}
	msg := s.git("log", "-1", "--format=%B", c)
	if !strings.HasPrefix(msg, "add a (node a)\n\nDid the thing.[31m\n---") || strings.ContainsAny(msg, "\x1b\r") {
		t.Errorf("message = %q", msg)
	}
	if got := s.git("log", "-1", "--format=%an <%ae>|%cn <%ce>", c); got != "Test Person <person@example.com>|Test Person <person@example.com>" {
		t.Errorf("identity = %q", got)
	}
	if got := s.git("rev-parse", c+"^"); got != head {
		t.Errorf("parent = %s, want %s", got, head)
	}
	tr, err := s.r.Trailers(ctx, c)
	if err != nil || !slices.Equal(tr, NodeTrailers("a.1", 7)) {
		t.Errorf("Trailers = %v, %v", tr, err)
	}
	for _, bad := range []Message{
		{Subject: " \n "},
		{Subject: "s", Trailers: []Trailer{{"Bad Key", "v"}}},
		{Subject: "s", Trailers: []Trailer{{"Key", "\n"}}},
	} {
		if _, err := s.r.Commit(ctx, snap.Tree, head, bad); err == nil {
			t.Errorf("Commit accepted %+v", bad)
		}
	}
	s.fsck()
}

func TestCommitWithoutAnIdentity(t *testing.T) {
	s := newScratch(t)
	s.git("config", "--unset", "user.name")
	s.git("config", "--unset", "user.email")
	r, err := Open(ctx, s.dir, Options{Env: s.env}) // the identity is read once per Repo
	if err != nil {
		t.Fatal(err)
	}
	id, err := r.Identity(ctx)
	if err != nil || id != (Identity{FallbackName, FallbackEmail, true}) {
		t.Errorf("Identity = %+v, %v", id, err)
	}
	s.write("a.txt", "a\n")
	snap, err := r.Snapshot(ctx, "", runtime)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Commit(ctx, snap.Tree, snap.Base, Message{Subject: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.git("log", "-1", "--format=%an <%ae>|%cn <%ce>", c); got != "runner <runner@localhost>|runner <runner@localhost>" {
		t.Errorf("identity = %q", got)
	}
	if cfg := s.git("config", "--list", "--show-origin"); strings.Contains(cfg, "user.") {
		t.Errorf("an identity was written to the configuration:\n%s", cfg)
	}

	// Only the address configured: the name falls back, the address is
	// the person's.
	s.git("config", "user.email", "me@example.com")
	r, _ = Open(ctx, s.dir, Options{Env: s.env})
	if id, _ := r.Identity(ctx); id != (Identity{FallbackName, "me@example.com", true}) {
		t.Errorf("Identity with an address only = %+v", id)
	}
}

func TestFindByTrailers(t *testing.T) {
	s := newScratch(t)
	parent := s.git("rev-parse", "HEAD")
	var commits []string
	for i, node := range []string{"a", "b", "a"} {
		s.write("f.txt", node+string(rune('0'+i))+"\n")
		snap, err := s.r.Snapshot(ctx, "", runtime)
		if err != nil {
			t.Fatal(err)
		}
		c, err := s.r.Commit(ctx, snap.Tree, parent, Message{Subject: "task " + node, Trailers: NodeTrailers(node, i+1)})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.r.AdvanceHead(ctx, snap, c, parent); err != nil {
			t.Fatal(err)
		}
		commits, parent = append(commits, c), c
	}
	for _, tc := range []struct {
		max  int
		want map[string]string
		id   string
	}{
		{10, map[string]string{TrailerNode: "a", TrailerIteration: "1"}, commits[0]},
		{10, map[string]string{"runner-node": "a"}, commits[2]}, // the most recent; keys ignore case
		{10, map[string]string{TrailerNode: "b", TrailerIteration: "2"}, commits[1]},
		{10, map[string]string{TrailerNode: "b", TrailerIteration: "3"}, ""},
		{10, map[string]string{TrailerNode: "c"}, ""},
		{2, map[string]string{TrailerIteration: "1"}, ""}, // beyond the last 2
	} {
		id, err := s.r.FindByTrailers(ctx, "main", tc.max, tc.want)
		if err != nil || id != tc.id {
			t.Errorf("FindByTrailers(%d, %v) = %s, %v; want %q", tc.max, tc.want, id, err, tc.id)
		}
	}
	if _, err := s.r.FindByTrailers(ctx, "no-such-branch", 10, map[string]string{TrailerNode: "a"}); err == nil {
		t.Error("FindByTrailers on a missing branch gave no error")
	}
}

func TestSaveAttemptIsIdempotent(t *testing.T) {
	s := newScratch(t)
	checkpoint := s.git("rev-parse", "HEAD")
	s.write("wip.go", "package wip // half done\n")
	s.write(".runner/state/run_state.json", "{}\n")
	snap, err := s.r.Snapshot(ctx, checkpoint, runtime)
	if err != nil {
		t.Fatal(err)
	}
	m := Message{Subject: "attempt", Trailers: NodeTrailers("a", 3)}
	c1, err := s.r.SaveAttempt(ctx, 3, snap.Tree, checkpoint, m)
	if err != nil {
		t.Fatal(err)
	}
	// A runner that died after saving saves again on resume, at another
	// time, maybe with another message: the saved commit stands.
	m.Body = "resumed"
	c2, err := s.r.SaveAttempt(ctx, 3, snap.Tree, checkpoint, m)
	if err != nil || c2 != c1 {
		t.Errorf("SaveAttempt again = %s, %v; want %s", c2, err, c1)
	}
	if got, _ := s.r.RefValue(ctx, AttemptRef(3)); got != c1 {
		t.Errorf("%s = %s, want %s", AttemptRef(3), got, c1)
	}
	if got := s.git("branch", "--contains", c1); got != "" {
		t.Errorf("the attempt is on a branch: %s", got)
	}
	if got := s.git("rev-parse", "HEAD"); got != checkpoint {
		t.Errorf("HEAD moved to %s", got)
	}
	if got := s.treeFiles(c1); slices.Contains(got, ".runner/state/run_state.json") || !slices.Contains(got, "wip.go") {
		t.Errorf("attempt files = %q", got)
	}

	// Other work for the same iteration replaces it.
	s.write("wip.go", "package wip // more done\n")
	snap2, _ := s.r.Snapshot(ctx, checkpoint, runtime)
	c3, err := s.r.SaveAttempt(ctx, 3, snap2.Tree, checkpoint, m)
	if err != nil || c3 == c1 {
		t.Errorf("SaveAttempt of other work = %s, %v", c3, err)
	}
	// Nothing to keep.
	clean := s.git("rev-parse", "HEAD^{tree}")
	if _, err := s.r.SaveAttempt(ctx, 4, clean, checkpoint, m); err != ErrNoChange {
		t.Errorf("SaveAttempt of the checkpoint's tree = %v, want ErrNoChange", err)
	}
	as, err := s.r.Attempts(ctx)
	if err != nil || len(as) != 1 || as[0] != (Attempt{3, c3}) {
		t.Errorf("Attempts = %+v, %v", as, err)
	}
	s.fsck()
}

// Repositories of their own inside the working tree (an agent's git init
// or git clone) are left out; a gitlink already staged is kept.
func TestSnapshotLeavesOutNestedRepositories(t *testing.T) {
	s := newScratch(t)
	s.gitIn(s.dir, "init", "-q", "empty")
	s.write("empty/file", "in a repository without a commit\n")
	s.gitIn(s.dir, "init", "-q", "cloned")
	s.write("cloned/file", "in a repository with a commit\n")
	s.gitIn(filepath.Join(s.dir, "cloned"), "add", "-A")
	s.gitIn(filepath.Join(s.dir, "cloned"), "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "x")
	s.gitIn(s.dir, "clone", "-q", "cloned", "vendor/sub")
	s.git("-c", "advice.addEmbeddedRepo=false", "add", "vendor/sub") // a gitlink, staged on purpose
	s.write("work.go", "package work\n")

	snap, err := s.r.Snapshot(ctx, "", runtime)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".gitignore", ".runner/.gitignore", ".runner/tree.json", "README", "vendor/sub", "work.go"}
	if got := s.treeFiles(snap.Tree); !slices.Equal(got, want) {
		t.Errorf("snapshot files = %q, want %q", got, want)
	}
	if want := []string{"vendor/sub", "work.go"}; !slices.Equal(snap.Paths, want) {
		t.Errorf("Paths = %q, want %q", snap.Paths, want)
	}
}

func TestAddErrors(t *testing.T) {
	for stderr, ok := range map[string]bool{
		"": true,
		"The following paths are ignored by one of your .gitignore files:\n.runner/runs":                 true,
		"warning: adding embedded git repository: x\nerror: 'empty/' does not have a commit checked out": true,
		"error: open(\"secret\"): Permission denied\nerror: unable to index file 'secret'":               false,
		"fatal: adding files failed":                                     false,
		"error: 'a/' does not have a commit checked out" + truncatedMark: false,
	} {
		if err := addErrors(stderr); (err == nil) != ok {
			t.Errorf("addErrors(%q) = %v", stderr, err)
		}
	}
}
