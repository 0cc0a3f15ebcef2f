package workers

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/runner-cli/runner/e2e"
	"github.com/runner-cli/runner/internal/state"
)

// TestEngineTLSAndAPIKey runs two tasks through a Temporal service that is
// reached only over TLS, as Temporal Cloud is: the coordinator with
// `tls = true` and `api_key_env` in [engine], the worker with `--tls
// --api-key-env`. A proxy in front of the dev server ends the TLS with a
// certificate of its own (trusted through SSL_CERT_FILE, as a private CA
// would be) and reads the headers of every gRPC request: each must carry
// the key as `authorization: Bearer KEY`. A worker told of a key variable
// that is not set refuses to start, naming it.
func TestEngineTLSAndAPIKey(t *testing.T) {
	const keyEnv, key = "RUNNER_TEST_TEMPORAL_KEY", "test-key-4f1c"
	var px *tlsProxy
	var caFile string
	_, r, _ := engineRepo(t, e2e.FlatTree("tls", 2, 0), func(address, remote string) string {
		px, caFile = startTLSProxy(t, address, key)
		return fmt.Sprintf(`%s
[engine]
address = %q
remote = %q
parallel = 2
tls = true
api_key_env = %q
`, e2e.TaskGuard, px.addr, remote, keyEnv)
	}, e2e.CrashSteadyEnv+` = "1"`, e2e.CrashSlotsEnv+` = "2"`)
	env := []string{"SSL_CERT_FILE=" + caFile, keyEnv + "=" + key}

	// Without the key in its environment the worker does not start.
	refused := startWorkerWith(t, r, px.addr, filepath.Join(t.TempDir(), "w0"), "w0", nil, "--tls", "--api-key-env", keyEnv)
	if code := refused.wait(time.Minute); code == 0 || !strings.Contains(refused.out.String(), keyEnv) {
		t.Errorf("a worker whose API key variable is not set exited %d, want an error naming %s:\n%s", code, keyEnv, refused.out)
	}

	w := startWorkerWith(t, r, px.addr, filepath.Join(t.TempDir(), "w"), "w", env, "--tls", "--api-key-env", keyEnv)
	if res := r.RunRunner(3*time.Minute, 0, env, "run"); res.Code != 0 {
		t.Fatalf("runner run exited %d:\n%s\nworker:\n%s", res.Code, res.Out, w.out)
	}
	w.stopCleanly()
	r.CheckFinal()
	s := r.CheckState("at the end")
	for n, m := range s.Metas {
		if m.Outcome != state.OutcomeDone || m.Worker != "w" {
			t.Errorf("iteration %d (%s): outcome %s on worker %q, want done on w", n, m.Node, m.Outcome, m.Worker)
		}
	}
	if len(s.Metas) != 2 {
		t.Errorf("%d iterations, want one per task", len(s.Metas))
	}

	requests, without := px.seen()
	if requests < 10 {
		t.Errorf("the proxy saw %d gRPC requests; the coordinator and the worker did not go through it", requests)
	}
	if len(without) > 0 {
		t.Errorf("%d of %d requests did not carry the API key, such as: %v", len(without), requests, without[:min(5, len(without))])
	}
}

// startWorkerWith starts `runner worker` in dir as startWorker does, with
// env added to its environment and args to its command line.
func startWorkerWith(t *testing.T, r *e2e.Repo, address, dir, name string, env []string, args ...string) *process {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv := append([]string{"runner", "--dir", dir, "worker", "--address", address, "--name", name, "--slots", "2"}, args...)
	environ := append(os.Environ(), "NO_COLOR=1", e2e.CrashRunEnv+"=workers", "RUNNER_SANDBOX_WRITABLE="+r.Log, e2e.NoNamespaces)
	return startProcess(t, &exec.Cmd{Path: exe, Args: argv, Env: append(environ, env...)})
}

// tlsProxy ends TLS in front of a plain gRPC service and forwards the
// bytes both ways, reading the header block of every request the client
// sends.
type tlsProxy struct {
	addr string
	key  string // the authorization every request must carry: "Bearer " + key

	mu       sync.Mutex
	requests int
	without  []string // the paths of requests without it
}

// startTLSProxy serves TLS on a free loopback port with a new self-signed
// certificate for 127.0.0.1, written in PEM to the returned file, and
// forwards to backend. Every request must carry `Bearer KEY`.
func startTLSProxy(t *testing.T, backend, key string) (*tlsProxy, string) {
	t.Helper()
	cert, pemBytes := selfSignedCert(t)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	px := &tlsProxy{addr: ln.Addr().String(), key: "Bearer " + key}
	var conns sync.WaitGroup
	t.Cleanup(func() { ln.Close(); conns.Wait() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() { defer conns.Done(); px.forward(c, backend) }()
		}
	}()
	return px, caFile
}

// forward copies c to and from a new connection to backend until either
// side ends, reading the client's HTTP/2 frames on the way.
func (px *tlsProxy) forward(c net.Conn, backend string) {
	defer c.Close()
	b, err := net.Dial("tcp", backend)
	if err != nil {
		return
	}
	defer b.Close()
	pr, pw := io.Pipe()
	go px.readRequests(pr)
	done := make(chan struct{}, 2)
	go func() { io.Copy(c, b); c.Close(); done <- struct{}{} }()
	go func() { io.Copy(io.MultiWriter(b, pw), c); pw.Close(); b.Close(); done <- struct{}{} }()
	<-done
}

// readRequests reads the client's side of an HTTP/2 connection, counting
// its requests and noting those without the key. It drains r to its end
// whatever it finds, so that the copy feeding it never blocks.
func (px *tlsProxy) readRequests(r io.Reader) {
	defer io.Copy(io.Discard, r)
	if _, err := io.ReadFull(r, make([]byte, len(http2.ClientPreface))); err != nil {
		return
	}
	fr := http2.NewFramer(nil, r)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
				px.mu.Lock()
				px.without = append(px.without, "unreadable frame: "+err.Error())
				px.mu.Unlock()
			}
			return
		}
		h, ok := f.(*http2.MetaHeadersFrame)
		if !ok {
			continue
		}
		auth := ""
		for _, hf := range h.RegularFields() {
			if hf.Name == "authorization" {
				auth = hf.Value
			}
		}
		px.mu.Lock()
		px.requests++
		if auth != px.key {
			px.without = append(px.without, h.PseudoValue("path"))
		}
		px.mu.Unlock()
	}
}

// seen is the number of requests read so far and the paths of those that
// did not carry the key.
func (px *tlsProxy) seen() (int, []string) {
	px.mu.Lock()
	defer px.mu.Unlock()
	return px.requests, append([]string(nil), px.without...)
}

// selfSignedCert is a new certificate for 127.0.0.1 and localhost that is
// its own authority, and its PEM.
func selfSignedCert(t *testing.T) (tls.Certificate, []byte) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "runner test Temporal proxy"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
