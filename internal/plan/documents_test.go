package plan

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadDocuments(t *testing.T) {
	root := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/prd.md", "The PRD.\n")
	write("docs/empty.md", " \n\n")
	write("docs/latin1.txt", "caf\xe9\n")
	if err := syscall.Mkfifo(filepath.Join(root, "docs/pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	cwd := filepath.Join(root, "docs")

	docs, err := ReadDocuments(root, cwd, []string{"prd.md", "-", filepath.Join(root, "docs/prd.md")}, strings.NewReader("From stdin."))
	if err == nil || !strings.Contains(err.Error(), "document docs/prd.md is named twice") {
		t.Fatalf("the same file by two names: %v, %v", docs, err)
	}
	docs, err = ReadDocuments(root, cwd, []string{"prd.md", "-"}, strings.NewReader("From stdin."))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[0].Name != "docs/prd.md" || docs[0].Text != "The PRD.\n" || docs[1].Name != "stdin" || docs[1].Text != "From stdin." {
		t.Errorf("docs = %+v", docs)
	}

	_, err = ReadDocuments(root, cwd, []string{"empty.md", "latin1.txt", "pipe", "../../elsewhere.md", "-", "-"}, strings.NewReader("x"))
	if err == nil {
		t.Fatal("bad documents accepted")
	}
	for _, want := range []string{"document docs/empty.md is empty", "document latin1.txt:", "UTF-8", "document pipe:",
		"document ../../elsewhere.md is outside the repository", "document stdin is named twice"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
