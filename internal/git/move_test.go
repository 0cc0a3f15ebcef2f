package git

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// twoCommits makes commit a (x.txt, y.txt, u.txt) and b on it (x.txt
// changed, y.txt deleted, z/new.txt added), and leaves HEAD, the index
// and the files at a.
func twoCommits(s *scratch) (a, b string) {
	s.t.Helper()
	s.write("x.txt", "x at a\n")
	s.write("y.txt", "y at a\n")
	s.write("u.txt", "u at a\n")
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "a")
	a = s.git("rev-parse", "HEAD")
	s.write("x.txt", "x at b\n")
	os.Remove(filepath.Join(s.dir, "y.txt"))
	s.write("z/new.txt", "new at b\n")
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "b")
	b = s.git("rev-parse", "HEAD")
	s.git("reset", "-q", "--hard", a)
	return a, b
}

// commitAside makes a commit on parent with files changed as given, with a
// temporary index: the working tree and its index are not touched.
func (s *scratch) commitAside(parent string, files map[string]string) string {
	s.t.Helper()
	saved := s.env
	defer func() { s.env = saved }()
	s.env = append(slices.Clip(saved), "GIT_INDEX_FILE="+filepath.Join(s.t.TempDir(), "index"))
	s.git("read-tree", parent)
	for path, content := range files {
		f := filepath.Join(s.t.TempDir(), "blob")
		writeFile(s.t, f, content)
		blob := s.git("hash-object", "-w", f)
		s.git("update-index", "--add", "--cacheinfo", "100644,"+blob+","+path)
	}
	tree := s.git("write-tree")
	return s.git("commit-tree", tree, "-p", parent, "-m", "replayed")
}

func TestFollowWritesWhatDiffersAndKeepsTheRest(t *testing.T) {
	s := newScratch(t)
	a, b := twoCommits(s)
	s.write("u.txt", "u changed by someone\n") // a path a and b agree on
	s.write("untracked.txt", "untracked\n")
	s.write(".runner/state/run_state.json", "{}\n")
	s.write("build/app", "ignored\n")

	if err := s.r.Follow(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	s.wantFiles(map[string]string{
		"x.txt":                        "x at b\n",
		"y.txt":                        "<missing>",
		"z/new.txt":                    "new at b\n",
		"u.txt":                        "u changed by someone\n",
		"untracked.txt":                "untracked\n",
		".runner/state/run_state.json": "{}\n",
		"build/app":                    "ignored\n",
	})
	if staged := s.git("diff", "--cached", "--name-only", b); staged != "" {
		t.Errorf("the index differs from b: %s", staged)
	}
	if got := s.git("diff", "--name-only", b); got != "u.txt" {
		t.Errorf("changed from b = %q, want u.txt alone", got)
	}
	if got := s.git("rev-parse", "HEAD"); got != a {
		t.Errorf("HEAD moved to %s", got)
	}
	s.noTempIndexes()
}

// A change on a path the move writes is never overwritten: the move
// fails and nothing is changed.
func TestFollowRefusesAChangeInTheWay(t *testing.T) {
	for name, prepare := range map[string]func(s *scratch){
		"changed file":       func(s *scratch) { s.write("x.txt", "x changed by someone\n") },
		"deleted file":       func(s *scratch) { s.write("y.txt", "y changed by someone\n") },
		"untracked in place": func(s *scratch) { s.write("z/new.txt", "someone's own\n") },
	} {
		t.Run(name, func(t *testing.T) {
			s := newScratch(t)
			a, b := twoCommits(s)
			prepare(s)
			before := map[string]string{}
			for _, p := range []string{"x.txt", "y.txt", "z/new.txt", "u.txt"} {
				before[p] = s.read(p)
			}
			if err := s.r.Follow(ctx, a, b); err == nil {
				t.Fatal("Follow overwrote a change")
			}
			for p, want := range before {
				if got := s.read(p); got != want {
					t.Errorf("%s = %q, want %q (as before)", p, got, want)
				}
			}
			if staged := s.git("diff", "--cached", "--name-only", a); staged != "" {
				t.Errorf("the index moved from a: %s", staged)
			}
		})
	}
}

func TestMoveDetached(t *testing.T) {
	s := newScratch(t)
	a, b := twoCommits(s)
	if err := s.r.MoveDetached(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	if got := s.git("rev-parse", "HEAD"); got != b {
		t.Errorf("HEAD = %s, want %s", got, b)
	}
	if br := s.git("branch", "--show-current"); br != "" {
		t.Errorf("HEAD is on branch %s, want detached", br)
	}
	if st := s.git("status", "--porcelain"); st != "" {
		t.Errorf("status after the move:\n%s", st)
	}
	if got := s.git("rev-parse", "main"); got != a {
		t.Errorf("main moved to %s; a branch HEAD was on stays", got)
	}
}

// ResetFromSnapshot puts a working tree holding a task's work at the
// task's commit replayed onto another: the files, the index, untracked
// files of the work gone, ignored and runtime files kept.
func TestResetFromSnapshot(t *testing.T) {
	for _, another := range []bool{false, true} {
		name := "its snapshot"
		if another {
			name = "another snapshot since"
		}
		t.Run(name, func(t *testing.T) {
			s := newScratch(t)
			a, b := twoCommits(s)
			s.write("u.txt", "u changed by the task\n")
			s.write("task/added.txt", "added by the task\n")
			s.write("build/app", "ignored\n")
			s.write(".runner/state/run_state.json", "{}\n")
			snap, err := s.r.Snapshot(ctx, a, runtime)
			if err != nil {
				t.Fatal(err)
			}
			// The commit the task became on b: u.txt as the task has it,
			// task/added.txt not (as if the replay had dropped it); made
			// without touching the working tree or its index.
			result := s.commitAside(b, map[string]string{"u.txt": "u changed by the task\n"})
			if another {
				if _, err := s.r.Snapshot(ctx, a, runtime); err != nil {
					t.Fatal(err)
				}
			}

			if err := s.r.ResetFromSnapshot(ctx, snap, result, runtime); err != nil {
				t.Fatal(err)
			}
			s.wantFiles(map[string]string{
				"x.txt":                        "x at b\n",
				"y.txt":                        "<missing>",
				"z/new.txt":                    "new at b\n",
				"u.txt":                        "u changed by the task\n",
				"task/added.txt":               "<missing>",
				"build/app":                    "ignored\n",
				".runner/state/run_state.json": "{}\n",
			})
			if staged := s.git("diff", "--cached", "--name-only", result); staged != "" {
				t.Errorf("the index differs from the result: %s", staged)
			}
			if got := s.git("diff", "--name-only", result); got != "" {
				t.Errorf("files differ from the result: %s", got)
			}
			if got := s.git("rev-parse", "HEAD"); got != a {
				t.Errorf("HEAD moved to %s", got)
			}
		})
	}
}

func TestKeep(t *testing.T) {
	s := newScratch(t)
	head := s.git("rev-parse", "HEAD")
	s.write("notes.txt", "someone's notes\n")
	snap, err := s.r.Snapshot(ctx, head, runtime)
	if err != nil {
		t.Fatal(err)
	}
	m := Message{Subject: "changes found in the checkout"}
	c, err := s.r.Keep(ctx, head, snap.Tree, head, m)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.git("rev-parse", KeptPrefix+head); got != c {
		t.Errorf("%s%s = %s, want %s", KeptPrefix, head, got, c)
	}
	if got := s.git("show", c+":notes.txt"); got != "someone's notes" {
		t.Errorf("kept notes.txt = %q", got)
	}
	if again, err := s.r.Keep(ctx, head, snap.Tree, head, m); err != nil || again != c {
		t.Errorf("Keep again = %s, %v; want the same commit %s", again, err, c)
	}
	if _, err := s.r.Keep(ctx, "bad name..", snap.Tree, head, m); err == nil {
		t.Error("Keep took a name that is no ref")
	}
}
