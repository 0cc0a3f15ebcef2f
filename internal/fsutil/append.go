package fsutil

import (
	"bytes"
	"fmt"
	"os"
)

// AppendSync appends data to path (creating it) and fsyncs it. The
// append-only notes files use it. The file is opened as OpenAppend
// opens it: a link is never written through.
func AppendSync(path string, data []byte) error {
	f, err := OpenAppend(path)
	if err != nil {
		return fmt.Errorf("append %s: %w", path, err)
	}
	return appendTo(f, path, data, Durable)
}

// AppendLine appends data, one or more complete lines, to path (creating
// it) and fsyncs it; the journal uses it. When the file does not end with a
// newline, its last line was torn by a crash in the middle of an append:
// that partial line is cut off first, so that every line in the file stays
// whole and a reader that ignores a torn last line never finds damage in
// the middle.
func AppendLine(path string, data []byte) error {
	return AppendLineAs(path, data, Durable)
}

// AppendLineAs is AppendLine with a choice of durability: with NotSynced
// the file is not fsynced, and the lines reach the disk with the next
// fsync of the file (an fsync writes every earlier append) or the kernel's
// writeback. Durable and FileSynced both fsync the file; neither fsyncs
// its directory, which matters only for the append that creates the file.
// The file is opened as OpenAppend opens it: a link is never written
// through, and the torn line is cut off the runner's own file.
func AppendLineAs(path string, data []byte, d Durability) error {
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return fmt.Errorf("append %s: the data does not end with a newline", path)
	}
	f, err := OpenAppend(path)
	if err != nil {
		return fmt.Errorf("append %s: %w", path, err)
	}
	if err := cutTornLine(f); err != nil {
		f.Close()
		return fmt.Errorf("append %s: cut a torn last line: %w", path, err)
	}
	return appendTo(f, path, data, d)
}

// appendTo writes data to f, opened for appending, fsyncs it unless d is
// NotSynced, and closes it.
func appendTo(f *os.File, path string, data []byte, d Durability) error {
	if failHere(FailAppend, path) {
		f.Write(data[:len(data)/2])
		die()
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("append %s: %w", path, err)
	}
	if d != NotSynced {
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("append %s: fsync: %w", path, err)
		}
	}
	return f.Close()
}

// cutTornLine truncates f after its last newline when it does not end
// with one.
func cutTornLine(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	end := st.Size()
	if end == 0 {
		return nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], end-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	buf := make([]byte, 4096)
	for off := end; off > 0; {
		n := int64(len(buf))
		if off < n {
			n = off
		}
		off -= n
		if _, err := f.ReadAt(buf[:n], off); err != nil {
			return err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return f.Truncate(off + int64(i) + 1)
		}
	}
	return f.Truncate(0)
}
