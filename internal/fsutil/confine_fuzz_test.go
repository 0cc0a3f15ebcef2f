//go:build unix

package fsutil

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Names inside the confined folder the fuzzed operations use, and the
// targets of the links the "agent" makes (relative to the link's own
// folder when they start with "..", else relative to the test's folder).
var (
	fuzzNames   = []string{"a", "b", "d", "d/a", "d/e", "d/e/b", "x", "x/a"}
	fuzzTargets = []string{"outside/bashrc", "outside", "outside/sub", "outside/sub/keep.txt", "../outside", "../../outside/bashrc", "in/a", "in/d"}
)

// FuzzConfined runs a random sequence of operations in a confined folder:
// an agent making folders, files, named pipes, and symbolic and hard links
// pointing inside and outside, and the package's writes, appends,
// replacements, removals and reads on the same names. Whatever happens,
// nothing outside the confined folder changes, and no read blocks.
//
// Each operation is three bytes: what, which name, which target (or
// second name).
func FuzzConfined(f *testing.F) {
	op := func(code, name, target byte) []byte { return []byte{code, name, target} }
	f.Add(bytes.Join([][]byte{op(opSymlink, 2, 1), op(opRemoveAll, 2, 0), op(opReplace, 3, 0)}, nil))
	f.Add(bytes.Join([][]byte{op(opSymlink, 0, 0), op(opAppend, 0, 0), op(opOpenWrite, 0, 0), op(opTruncate, 0, 0)}, nil))
	f.Add(bytes.Join([][]byte{op(opHardlink, 0, 0), op(opAppendLine, 0, 0), op(opCreate, 0, 0), op(opOpenWrite, 0, 0)}, nil))
	f.Add(bytes.Join([][]byte{op(opSymlink, 6, 1), op(opMkdirAll, 7, 0), op(opReplace, 7, 0), op(opRename, 0, 7)}, nil))
	f.Add(bytes.Join([][]byte{op(opMkfifo, 1, 0), op(opRead, 1, 0), op(opAppend, 1, 0), op(opRead, 1, 0)}, nil))
	f.Add(bytes.Join([][]byte{op(opMkdir, 2, 0), op(opSymlink, 4, 2), op(opWrite, 5, 0), op(opRemoveAll, 2, 0), op(opReadDir, 4, 0)}, nil))
	f.Add(bytes.Join([][]byte{op(opSymlink, 2, 4), op(opRemoveTemps, 3, 0), op(opSymlink, 1, 5), op(opRename, 1, 0)}, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 3*48 {
			data = data[:3*48]
		}
		base := t.TempDir()
		in := filepath.Join(base, "in")
		outside := filepath.Join(base, "outside")
		for _, d := range []string{in, filepath.Join(outside, "sub")} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		os.WriteFile(filepath.Join(outside, "bashrc"), []byte("keep me\n"), 0o644)
		os.WriteFile(filepath.Join(outside, "sub", "keep.txt"), []byte("and me\n"), 0o644)
		before := snapshot(t, outside)
		if err := Confine(in); err != nil {
			t.Fatal(err)
		}
		defer Release(in)
		for i := 0; i+2 < len(data); i += 3 {
			name := filepath.Join(in, fuzzNames[int(data[i+1])%len(fuzzNames)])
			other := filepath.Join(in, fuzzNames[int(data[i+2])%len(fuzzNames)])
			target := fuzzTargets[int(data[i+2])%len(fuzzTargets)]
			if !strings.HasPrefix(target, "..") {
				target = filepath.Join(base, target)
			}
			fuzzOp(t, data[i]%opCount, name, other, target)
		}
		if after := snapshot(t, outside); after != before {
			t.Fatalf("the folder outside changed:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})
}

// The operations of FuzzConfined.
const (
	// The agent's, as a process confined to the folder makes them.
	opMkdir = iota
	opWrite
	opSymlink
	opHardlink
	opMkfifo
	opAgentRemove
	// The package's.
	opReplace
	opAppendLine
	opAppend
	opOpenWrite
	opCreate
	opTruncate
	opRemove
	opRemoveAll
	opMkdirAll
	opRename
	opRead
	opReadDir
	opRemoveTemps
	opCount
)

func fuzzOp(t *testing.T, op byte, name, other, target string) {
	switch op {
	case opMkdir, opWrite, opSymlink, opHardlink, opMkfifo, opAgentRemove:
		agentOp(op, name, target)
	case opReplace:
		ReplaceFile(name, []byte("replaced\n"), 0o644, NotSynced)
	case opAppendLine:
		AppendLineAs(name, []byte("line\n"), NotSynced)
	case opAppend:
		if f, err := OpenAppend(name); err == nil {
			f.WriteString("appended\n")
			f.Close()
		}
	case opOpenWrite:
		if f, err := OpenWrite(name); err == nil {
			f.WriteAt([]byte("over"), 0)
			f.Truncate(4)
			f.Close()
		}
	case opCreate:
		if f, err := Create(name); err == nil {
			f.WriteString("created\n")
			f.Close()
		}
	case opTruncate:
		Truncate(name, 1)
	case opRemove:
		Remove(name)
	case opRemoveAll:
		RemoveAll(name)
	case opMkdirAll:
		MkdirAll(name, 0o755)
	case opRename:
		Rename(name, other)
	case opRead:
		if _, err := ReadLimited(name, 1<<20, false); err != nil && !errors.Is(err, ErrNotRegular) &&
			!errors.Is(err, ErrSymlink) && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			t.Fatalf("ReadLimited(%s): %v", name, err)
		}
	case opReadDir:
		ReadDir(name)
	case opRemoveTemps:
		RemoveTemps(filepath.Dir(name))
	}
}

// agentOp does what an agent confined to the folder can do: nothing
// through a symbolic link of its parent folders (its sandbox resolves
// them, and they lead outside).
func agentOp(op byte, name, target string) {
	for p := filepath.Dir(name); !strings.HasSuffix(p, "/in"); p = filepath.Dir(p) {
		if st, err := os.Lstat(p); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return
		}
	}
	switch op {
	case opMkdir:
		os.Mkdir(name, 0o755)
	case opWrite:
		// A file with another link may be one outside, which this agent
		// cannot write; only the package's writes are under test.
		if st, err := os.Lstat(name); err == nil {
			if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
				return
			}
		}
		if f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644); err == nil {
			f.WriteString("agent\n")
			f.Close()
		}
	case opSymlink:
		os.Remove(name)
		os.Symlink(target, name)
	case opHardlink:
		if !strings.HasSuffix(target, "bashrc") && !strings.HasSuffix(target, ".txt") {
			return
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(name), target)
		}
		os.Remove(name)
		os.Link(target, name)
	case opMkfifo:
		os.Remove(name)
		syscall.Mkfifo(name, 0o644)
	case opAgentRemove:
		os.Remove(name)
	}
}

// snapshot describes a folder: every entry's path, type and, for files,
// content (the link count of a file changes when the agent links it, and
// is left out).
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b.WriteString(strings.TrimPrefix(p, dir) + " " + info.Mode().String())
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.WriteString(" " + string(data))
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
