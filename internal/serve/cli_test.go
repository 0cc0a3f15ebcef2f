package serve_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/cli"
)

// TestAPIStatusIsStatusJSON: GET /api/status returns, byte for byte, what
// `runner status --json` prints.
func TestAPIStatusIsStatusJSON(t *testing.T) {
	root, bin := scratchRun(t)
	var want, stderr bytes.Buffer
	if code := cli.Execute(context.Background(), []string{"--dir", root, "status", "--json"}, cli.Streams{In: strings.NewReader(""), Out: &want, Err: &stderr}); code != 0 {
		t.Fatalf("runner status --json: exit %d: %s", code, stderr.String())
	}
	url := startServe(t, bin, root, "--token", "tok")
	req, _ := http.NewRequest(http.MethodGet, url+"api/status", nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, want.Bytes()) {
		t.Errorf("GET /api/status: %d\n%s\nwant runner status --json:\n%s", resp.StatusCode, got, want.String())
	}
}

func TestServeRefusesToExposeWithoutToken(t *testing.T) {
	var out, stderr bytes.Buffer
	code := cli.Execute(context.Background(), []string{"--dir", t.TempDir(), "serve", "--addr", "0.0.0.0:0"}, cli.Streams{In: strings.NewReader(""), Out: &out, Err: &stderr})
	if code != 1 || !strings.Contains(stderr.String(), "not a loopback address") || !strings.Contains(stderr.String(), "--token") {
		t.Errorf("runner serve --addr 0.0.0.0:0 without a token: exit %d, %q; want 1 and why", code, stderr.String())
	}
}
