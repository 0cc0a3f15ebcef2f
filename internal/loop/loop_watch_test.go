package loop

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"github.com/runner-cli/runner/internal/config"
	"github.com/runner-cli/runner/internal/fsutil"
	"github.com/runner-cli/runner/internal/outcome"
	"github.com/runner-cli/runner/internal/state"
	"github.com/runner-cli/runner/internal/tree"
)

const testConfig = `[executor]
preset = "command"
command = ["true"]
`

const testTree = `{"version": 1, "root": {"id": "app", "title": "App", "children": [
  {"id": "a", "title": "A"}
]}}
`

// notices collects what the runner tells the person and signals each write.
type notices struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (n *notices) Write(p []byte) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	select {
	case n.wrote <- struct{}{}:
	default:
	}
	return n.buf.Write(p)
}

func (n *notices) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.buf.String()
}

// waitNotice waits, bounded, until the notices contain want.
func (n *notices) waitNotice(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(n.String(), want) {
		select {
		case <-n.wrote:
		case <-deadline:
			t.Fatalf("no notice containing %q within 10s; got:\n%s", want, n.String())
		}
	}
}

// newTestRunner returns a runner over a fresh repository holding a valid
// config and tree, as Run leaves it after its first boundary.
func newTestRunner(t *testing.T, ctx context.Context) (*Runner, *notices) {
	t.Helper()
	p := state.NewPaths(t.TempDir())
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, p.Config(), testConfig)
	write(t, p.Tree(), testTree)
	n := &notices{wrote: make(chan struct{}, 1)}
	r := &Runner{p: p, opts: Options{Paths: p, Notices: n}, in: inputState{recheck: time.Hour}}
	r.log = log.New(io.Discard)
	cfg, err := config.Load(p.Config())
	if err != nil {
		t.Fatal(err)
	}
	r.cfg = cfg
	r.in.seen = r.fingerprint()
	return r, n
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// editorSave replaces path the way editors do: a temporary file renamed over it.
func editorSave(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".swp")
	write(t, tmp, content)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestOwnWritesAndNoiseDoNotCount checks what ends a wait: with a stop
// already asked, a wait that sees no change of the inputs ends with the
// stop, and one that sees a change ends with the change (changes win).
func TestOwnWritesAndNoiseDoNotCount(t *testing.T) {
	tests := []struct {
		name    string
		touch   func(t *testing.T, r *Runner)
		changed bool
	}{
		{"nothing", func(t *testing.T, r *Runner) {}, false},
		{"the runner saving the same tree", func(t *testing.T, r *Runner) {
			tr, err := tree.Load(r.p.Tree())
			if err != nil {
				t.Fatal(err)
			}
			// Used-up attempts make the runner block the task and save the
			// tree (canonically, so the bytes differ from the hand-written
			// file): it remembers what it wrote.
			tr.Root.Children[0].Attempts = 3
			if ok, err := r.settleAttempts(tr); err != nil || !ok {
				t.Fatalf("settleAttempts = %v, %v", ok, err)
			}
			if data, _ := os.ReadFile(r.p.Tree()); !strings.Contains(string(data), outcome.ReasonExhausted) {
				t.Fatalf("the tree was not saved:\n%s", data)
			}
		}, false},
		{"the same bytes saved by an editor", func(t *testing.T, r *Runner) {
			editorSave(t, r.p.Tree(), testTree)
			editorSave(t, r.p.Config(), testConfig)
		}, false},
		{"chmod", func(t *testing.T, r *Runner) {
			if err := os.Chmod(r.p.Tree(), 0o600); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"state files and temporary files", func(t *testing.T, r *Runner) {
			if err := fsutil.WriteFileAtomic(r.p.RunState(), []byte("{}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := state.AppendJournal(r.p.Journal(), state.Record{Event: state.EventStarted}); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(r.p.Dir, fsutil.TempPrefix+"tree.json-1"), "{")
		}, false},
		{"a task added", func(t *testing.T, r *Runner) {
			editorSave(t, r.p.Tree(), strings.Replace(testTree, `{"id": "a", "title": "A"}`, `{"id": "a", "title": "A"}, {"id": "b", "title": "B"}`, 1))
		}, true},
		{"config edited", func(t *testing.T, r *Runner) {
			editorSave(t, r.p.Config(), testConfig+"\n[loop]\nmax_attempts = 5\n")
		}, true},
		{"tree removed", func(t *testing.T, r *Runner) {
			os.Remove(r.p.Tree())
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newTestRunner(t, context.Background())
			tc.touch(t, r)
			write(t, r.p.StopRequest(), "stop\n")
			want := stopAsked
			if tc.changed {
				want = inputsChanged
			}
			if got := r.waitForChange(context.Background(), r.in.seen); got != want {
				t.Errorf("waitForChange = %v, want %v", got, want)
			}
		})
	}
}

// TestWaitWakesOnEditorSave checks that a waiting runner is woken by the
// change notification itself: the fallback re-check is an hour away.
func TestWaitWakesOnEditorSave(t *testing.T) {
	tests := []struct {
		name string
		act  func(t *testing.T, r *Runner)
		want waitEnd
	}{
		{"tree saved by rename", func(t *testing.T, r *Runner) {
			editorSave(t, r.p.Tree(), strings.Replace(testTree, `"A"`, `"A, renamed"`, 1))
		}, inputsChanged},
		{"config written in place", func(t *testing.T, r *Runner) {
			write(t, r.p.Config(), testConfig+"\n[loop]\nmax_attempts = 5\n")
		}, inputsChanged},
		{"runner stop", func(t *testing.T, r *Runner) {
			if err := fsutil.WriteFileAtomic(r.p.StopRequest(), []byte("stop\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, stopAsked},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newTestRunner(t, context.Background())
			done := make(chan waitEnd, 1)
			go func() { done <- r.waitForChange(context.Background(), r.in.seen) }()
			// The change may come before or after the watch is set up:
			// both must end the wait.
			tc.act(t, r)
			select {
			case got := <-done:
				if got != tc.want {
					t.Errorf("waitForChange = %v, want %v", got, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the wait did not end within 10s of the change")
			}
		})
	}
}

func TestWaitEndsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r, _ := newTestRunner(t, ctx)
	done := make(chan waitEnd, 1)
	go func() { done <- r.waitForChange(ctx, r.in.seen) }()
	cancel()
	select {
	case got := <-done:
		if got != cancelled {
			t.Errorf("waitForChange = %v, want cancelled", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not end within 10s of the cancellation")
	}
}

// TestLoadInputsWaitsOutInvalidEdit: a broken tree is reported with the
// file and the position, never written, and the fixed version is used.
func TestLoadInputsWaitsOutInvalidEdit(t *testing.T) {
	r, n := newTestRunner(t, context.Background())
	broken := "{\"version\": 1,\n \"root\": {\"id\": \"app\" \"title\": \"App\"}}\n"
	write(t, r.p.Tree(), broken)
	type result struct {
		t  *tree.Tree
		ok bool
	}
	done := make(chan result, 1)
	go func() {
		tr, ok := r.loadInputs(context.Background())
		done <- result{tr, ok}
	}()
	n.waitNotice(t, "runner: .runner/tree.json does not load; it is left exactly as it is")
	n.waitNotice(t, "tree.json: line 2, column 23: unexpected")
	if data, _ := os.ReadFile(r.p.Tree()); string(data) != broken {
		t.Fatalf("the broken tree was changed:\n%s", data)
	}
	editorSave(t, r.p.Tree(), strings.Replace(testTree, `"A"`, `"Fixed"`, 1))
	select {
	case res := <-done:
		if !res.ok || res.t.Root.Children[0].Title != "Fixed" {
			t.Fatalf("loadInputs = %+v, want the fixed tree", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("loadInputs did not return within 10s of the fix")
	}
	n.waitNotice(t, "runner: .runner/tree.json: valid again; going on")
}

func TestLoadInputsStopWhileInvalid(t *testing.T) {
	r, n := newTestRunner(t, context.Background())
	write(t, r.p.Config(), "[executor]\npreset = \"nope\"\n")
	done := make(chan bool, 1)
	go func() {
		_, ok := r.loadInputs(context.Background())
		done <- ok
	}()
	n.waitNotice(t, ".runner/config.toml does not load")
	write(t, r.p.StopRequest(), "stop\n")
	select {
	case ok := <-done:
		if ok {
			t.Fatal("loadInputs reported success with a broken config")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("loadInputs did not return within 10s of the stop")
	}
}

func TestTreeForRecord(t *testing.T) {
	t.Run("stop while waiting", func(t *testing.T) {
		r, n := newTestRunner(t, context.Background())
		write(t, r.p.Tree(), "{")
		done := make(chan error, 1)
		go func() {
			_, err := r.treeForRecord(context.Background(), 7)
			done <- err
		}()
		n.waitNotice(t, "(cannot record iteration 7)")
		write(t, r.p.StopRequest(), "stop\n")
		select {
		case err := <-done:
			if !errors.Is(err, errStopWhileWaiting) {
				t.Fatalf("treeForRecord error = %v, want errStopWhileWaiting", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("treeForRecord did not return within 10s of the stop")
		}
	})
	t.Run("interrupted run does not wait", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r, n := newTestRunner(t, ctx)
		write(t, r.p.Tree(), "{")
		_, err := r.treeForRecord(ctx, 3)
		if err == nil || !strings.Contains(err.Error(), "record iteration 3") || !strings.Contains(err.Error(), "stays in flight") {
			t.Fatalf("treeForRecord error = %v", err)
		}
		if n.String() != "" {
			t.Errorf("an interrupted run announced a wait: %q", n.String())
		}
	})
}

func TestSettleAttempts(t *testing.T) {
	two := 2
	tests := []struct {
		name       string
		node       tree.Node
		wantStatus tree.Status
		wantReason string
		wantSave   bool
	}{
		{"open with attempts left", tree.Node{Attempts: 1}, "", "", false},
		{"open with attempts used up", tree.Node{Attempts: 3}, tree.StatusBlocked, outcome.ReasonExhausted, true},
		{"exhausted, limit raised", tree.Node{Attempts: 1, MaxAttempts: &two, Status: tree.StatusBlocked, BlockedReason: outcome.ReasonExhausted}, "", "", true},
		{"exhausted, limit still reached", tree.Node{Attempts: 2, MaxAttempts: &two, Status: tree.StatusBlocked, BlockedReason: outcome.ReasonExhausted}, tree.StatusBlocked, outcome.ReasonExhausted, false},
		{"blocked by the agent", tree.Node{Attempts: 0, Status: tree.StatusBlocked, BlockedReason: "needs a key"}, tree.StatusBlocked, "needs a key", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newTestRunner(t, context.Background())
			leaf := tc.node
			leaf.ID, leaf.Title = "a", "A"
			tr := &tree.Tree{Version: 1, Root: &tree.Node{ID: "app", Title: "App", Children: []*tree.Node{&leaf}}}
			if err := tree.Save(r.p.Tree(), tr); err != nil {
				t.Fatal(err)
			}
			r.in.seen = r.fingerprint()
			before, _ := os.ReadFile(r.p.Tree())
			ok, err := r.settleAttempts(tr)
			if err != nil || !ok {
				t.Fatalf("settleAttempts = %v, %v", ok, err)
			}
			if leaf.Status != tc.wantStatus || leaf.BlockedReason != tc.wantReason {
				t.Errorf("status %q reason %q, want %q %q", leaf.Status, leaf.BlockedReason, tc.wantStatus, tc.wantReason)
			}
			after, _ := os.ReadFile(r.p.Tree())
			if saved := !bytes.Equal(before, after); saved != tc.wantSave {
				t.Errorf("tree saved: %v, want %v", saved, tc.wantSave)
			}
			if r.fingerprint() != r.in.seen {
				t.Error("the runner's own save is not remembered as seen")
			}
		})
	}
	t.Run("an edit since the read is not overwritten", func(t *testing.T) {
		r, _ := newTestRunner(t, context.Background())
		tr, err := tree.Load(r.p.Tree())
		if err != nil {
			t.Fatal(err)
		}
		tr.Root.Children[0].Attempts = 3 // needs saving: exhausted
		edited := strings.Replace(testTree, `"A"`, `"A, edited"`, 1)
		editorSave(t, r.p.Tree(), edited)
		ok, err := r.settleAttempts(tr)
		if err != nil || ok {
			t.Fatalf("settleAttempts = %v, %v; want false, nil", ok, err)
		}
		if data, _ := os.ReadFile(r.p.Tree()); string(data) != edited {
			t.Fatalf("the person's edit was overwritten:\n%s", data)
		}
	})
}
